// Package cpukernels holds gogml's plain Go reference implementation of
// every graph op the CPU backend runs, and the element formats they read
// and write: f16 and bf16 conversion and the quantized blocks (q4_0, q4_1,
// q5_0, q5_1, q8_0, q8_1, q2_K..q6_K, q8_K), all bit-exact to ggml's
// reference code.
//
// The reference kernels (Compute) are straightforward loops over a tensor's
// ne/nb strides: they accept non-contiguous views and permuted inputs, and
// stay correct when the result aliases a source with the same layout (the
// in-place case of runtime.Op.CanInplace). They are the yardstick for every
// backend (see backends/backendtest) and the CPU backend's fallback; the
// fast kernels live in package vec.
package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// Block sizes of the quantized types this package implements.
const (
	// QK is the number of elements in a q4_0 or q8_0 block.
	QK = 32
	// BlockQ8_0Size is the bytes of a q8_0 block: an f16 scale and 32 int8.
	BlockQ8_0Size = 2 + QK
	// BlockQ4_0Size is the bytes of a q4_0 block: an f16 scale and 32
	// nibbles.
	BlockQ4_0Size = 2 + QK/2
)

// F32ToF16 converts f to IEEE half precision bits, rounding to nearest with
// ties to even, as ggml does. Values beyond the half range become ±Inf;
// NaN becomes the quiet NaN 0x7e00 with f's sign.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Half subnormal (or zero): the unit is 2^-24.
		if exp == 0 {
			return sign // float32 subnormals are far below half's range
		}
		m := man | 0x800000
		shift := uint(14 - e)
		if shift > 24 {
			return sign
		}
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to Inf: still correct
	}
	return sign | uint16(h)
}

// F16ToF32 converts IEEE half precision bits to float32 exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalize.
	e := uint32(127 - 15 + 1)
	for man&0x400 == 0 {
		man <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
}

// F32ToBF16 converts f to bfloat16 bits as ggml does: round to nearest with
// ties to even; NaN keeps its top bits and is made quiet.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// BF16ToF32 converts bfloat16 bits to float32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// QuantizeRowQ8_0 quantizes x (a multiple of 32 elements) into q8_0 blocks
// in dst, exactly as ggml's reference: per block d = max|x|/127 stored as
// f16, q = round(x/d) (halves away from zero).
func QuantizeRowQ8_0(x []float32, dst []byte) error {
	nb := len(x) / QK
	if len(x)%QK != 0 || len(dst) < nb*BlockQ8_0Size {
		return fmt.Errorf("q8_0: %d elements into %d bytes: %w", len(x), len(dst), runtime.ErrShape)
	}
	for i := 0; i < nb; i++ {
		xs := x[i*QK : i*QK+QK]
		blk := dst[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		var amax float32
		for _, v := range xs {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(blk, F32ToF16(d))
		for j, v := range xs {
			blk[2+j] = byte(int8(math.Round(float64(v * id))))
		}
	}
	return nil
}

// DequantizeRowQ8_0 expands q8_0 blocks into y (a multiple of 32 elements).
func DequantizeRowQ8_0(src []byte, y []float32) error {
	nb := len(y) / QK
	if len(y)%QK != 0 || len(src) < nb*BlockQ8_0Size {
		return fmt.Errorf("q8_0: %d elements from %d bytes: %w", len(y), len(src), runtime.ErrShape)
	}
	for i := 0; i < nb; i++ {
		blk := src[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		ys := y[i*QK : i*QK+QK]
		for j := range ys {
			ys[j] = float32(int8(blk[2+j])) * d
		}
	}
	return nil
}

// QuantizeRowQ4_0 quantizes x (a multiple of 32 elements) into q4_0 blocks
// in dst, exactly as ggml's reference: per block the element of largest
// magnitude m (with its sign) gives d = m/-8 stored as f16, q =
// min(15, trunc(x/d + 8.5)); element j of a block goes to the low nibble of
// byte j, element j+16 to its high nibble.
func QuantizeRowQ4_0(x []float32, dst []byte) error {
	nb := len(x) / QK
	if len(x)%QK != 0 || len(dst) < nb*BlockQ4_0Size {
		return fmt.Errorf("q4_0: %d elements into %d bytes: %w", len(x), len(dst), runtime.ErrShape)
	}
	for i := 0; i < nb; i++ {
		xs := x[i*QK : i*QK+QK]
		blk := dst[i*BlockQ4_0Size : (i+1)*BlockQ4_0Size]
		var amax, mx float32
		for _, v := range xs {
			if amax < abs32(v) {
				amax = abs32(v)
				mx = v
			}
		}
		d := mx / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(blk, F32ToF16(d))
		for j := 0; j < QK/2; j++ {
			q0 := nibble(xs[j]*id + 8.5)
			q1 := nibble(xs[j+QK/2]*id + 8.5)
			blk[2+j] = q0 | q1<<4
		}
	}
	return nil
}

// nibble truncates v toward zero as C's (int8_t) cast does and caps it at
// 15. v lies in [0, 16.5] for finite input; NaN gives 0.
func nibble(v float32) byte {
	if !(v > 0) {
		return 0
	}
	q := int32(v)
	if q > 15 {
		q = 15
	}
	return byte(q)
}

// DequantizeRowQ4_0 expands q4_0 blocks into y (a multiple of 32 elements).
func DequantizeRowQ4_0(src []byte, y []float32) error {
	nb := len(y) / QK
	if len(y)%QK != 0 || len(src) < nb*BlockQ4_0Size {
		return fmt.Errorf("q4_0: %d elements from %d bytes: %w", len(y), len(src), runtime.ErrShape)
	}
	for i := 0; i < nb; i++ {
		blk := src[i*BlockQ4_0Size : (i+1)*BlockQ4_0Size]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		ys := y[i*QK : i*QK+QK]
		for j := 0; j < QK/2; j++ {
			ys[j] = float32(int(blk[2+j]&0xf)-8) * d
			ys[j+QK/2] = float32(int(blk[2+j]>>4)-8) * d
		}
	}
	return nil
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// IsFloat reports whether typ is one of the float element types the
// kernels load and store element by element: f32, f16, bf16.
func IsFloat(typ runtime.Type) bool {
	return typ == runtime.TypeF32 || typ == runtime.TypeF16 || typ == runtime.TypeBF16
}

// IsRowType reports whether the kernels can convert whole rows of typ to
// float32: the float types and every block type of ggml 0.27.0; all but
// the grid i-quants also back (CanQuantize).
func IsRowType(typ runtime.Type) bool {
	_, ok := codec(typ)
	return ok || IsFloat(typ) || typ == runtime.TypeQ4_0 || typ == runtime.TypeQ8_0
}

// ToFloat converts len(dst) elements of type typ, stored contiguously in
// src, to float32. typ must satisfy IsRowType; block types need a multiple
// of 32 elements.
func ToFloat(typ runtime.Type, src []byte, dst []float32) error {
	switch typ {
	case runtime.TypeF32:
		if len(src) < 4*len(dst) {
			return fmt.Errorf("f32 row: %w", runtime.ErrOutOfBounds)
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case runtime.TypeF16, runtime.TypeBF16:
		if len(src) < 2*len(dst) {
			return fmt.Errorf("%s row: %w", typ, runtime.ErrOutOfBounds)
		}
		conv := F16ToF32
		if typ == runtime.TypeBF16 {
			conv = BF16ToF32
		}
		for i := range dst {
			dst[i] = conv(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case runtime.TypeQ8_0:
		return DequantizeRowQ8_0(src, dst)
	case runtime.TypeQ4_0:
		return DequantizeRowQ4_0(src, dst)
	default:
		if c, ok := codec(typ); ok {
			return c.to(src, dst)
		}
		return fmt.Errorf("convert %s to f32: %w", typ, runtime.ErrUnsupported)
	}
	return nil
}

// FromFloat converts src to len(src) contiguous elements of type typ in
// dst, quantizing block types with ggml's reference quantizers (those of
// ggml_quantize_chunk; see FromFloatCPU for the CPU backend's). typ must
// satisfy IsRowType.
func FromFloat(typ runtime.Type, src []float32, dst []byte) error {
	switch typ {
	case runtime.TypeF32:
		if len(dst) < 4*len(src) {
			return fmt.Errorf("f32 row: %w", runtime.ErrOutOfBounds)
		}
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case runtime.TypeF16, runtime.TypeBF16:
		if len(dst) < 2*len(src) {
			return fmt.Errorf("%s row: %w", typ, runtime.ErrOutOfBounds)
		}
		conv := F32ToF16
		if typ == runtime.TypeBF16 {
			conv = F32ToBF16
		}
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], conv(v))
		}
	case runtime.TypeQ8_0:
		return QuantizeRowQ8_0(src, dst)
	case runtime.TypeQ4_0:
		return QuantizeRowQ4_0(src, dst)
	default:
		if c, ok := codec(typ); ok && c.ref != nil {
			return c.ref(src, dst)
		}
		return fmt.Errorf("convert f32 to %s: %w", typ, runtime.ErrUnsupported)
	}
	return nil
}

// loadF reads the float element of type typ at byte off of b. typ must
// satisfy IsFloat.
func loadF(typ runtime.Type, b []byte, off uint64) float32 {
	switch typ {
	case runtime.TypeF16:
		return F16ToF32(binary.LittleEndian.Uint16(b[off:]))
	case runtime.TypeBF16:
		return BF16ToF32(binary.LittleEndian.Uint16(b[off:]))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

// storeF writes v as a float element of type typ at byte off of b.
func storeF(typ runtime.Type, b []byte, off uint64, v float32) {
	switch typ {
	case runtime.TypeF16:
		binary.LittleEndian.PutUint16(b[off:], F32ToF16(v))
	case runtime.TypeBF16:
		binary.LittleEndian.PutUint16(b[off:], F32ToBF16(v))
	default:
		binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v))
	}
}
