package backendtest

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/gogml/gogml/runtime"
)

// gridTypes are the block types with no quantizer (ggml has none on its
// CPU either): their inputs are random blocks with a fixed scale.
var gridTypes = []runtime.Type{runtime.TypeIQ2_XXS, runtime.TypeIQ2_XS, runtime.TypeIQ2_S,
	runtime.TypeIQ3_XXS, runtime.TypeIQ3_S, runtime.TypeIQ1_S, runtime.TypeIQ1_M}

// gridScale is the f16 super-block scale of gridBlocks' blocks (1/16).
const gridScale = 0x2c00

// gridBlocks fills buf, whole blocks of a type in gridTypes, with random
// grid indices, signs and block scales under the super-block scale
// gridScale (random scale bits could be Inf or NaN).
func gridBlocks(rng *rand.Rand, typ runtime.Type, buf []byte) {
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	bs := int(typ.Size())
	for o := 0; o+bs <= len(buf); o += bs {
		blk := buf[o : o+bs]
		if typ != runtime.TypeIQ1_M {
			binary.LittleEndian.PutUint16(blk, gridScale)
			continue
		}
		// iq1_m spreads its f16 scale over the top nibbles of the four
		// scale words at the block's end.
		for k := 0; k < 4; k++ {
			p := bs - 8 + 2*k + 1
			blk[p] = blk[p]&0x0f | byte(uint16(gridScale)>>(4*k)&0xf)<<4
		}
	}
}
