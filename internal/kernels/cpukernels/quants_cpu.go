package cpukernels

import (
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file ties the block types to the generic row conversions and holds
// the quantizers ggml's CPU backend uses where they differ from the
// reference ones: its x86 q8_0 and q8_1 quantizers (activations of
// MUL_MAT, CPY into q8_0) scale by 127/max and round halves to even, where
// the reference scales by 1/(max/127) and rounds halves away from zero.

// quantCodec is the pair of row conversions of one block type.
type quantCodec struct {
	to  func([]byte, []float32) error // dequantizer (src, dst)
	ref func([]float32, []byte) error // reference quantizer
}

// codec returns the conversions of a block type other than q4_0 and q8_0,
// or false.
func codec(typ runtime.Type) (quantCodec, bool) {
	switch typ {
	case runtime.TypeQ4_1:
		return quantCodec{to: DequantizeRowQ4_1, ref: QuantizeRowQ4_1}, true
	case runtime.TypeQ5_0:
		return quantCodec{to: DequantizeRowQ5_0, ref: QuantizeRowQ5_0}, true
	case runtime.TypeQ5_1:
		return quantCodec{to: DequantizeRowQ5_1, ref: QuantizeRowQ5_1}, true
	case runtime.TypeQ8_1:
		return quantCodec{to: DequantizeRowQ8_1, ref: QuantizeRowQ8_1}, true
	case runtime.TypeQ2_K:
		return quantCodec{to: DequantizeRowQ2_K, ref: QuantizeRowQ2_K}, true
	case runtime.TypeQ3_K:
		return quantCodec{to: DequantizeRowQ3_K, ref: QuantizeRowQ3_K}, true
	case runtime.TypeQ4_K:
		return quantCodec{to: DequantizeRowQ4_K, ref: QuantizeRowQ4_K}, true
	case runtime.TypeQ5_K:
		return quantCodec{to: DequantizeRowQ5_K, ref: QuantizeRowQ5_K}, true
	case runtime.TypeQ6_K:
		return quantCodec{to: DequantizeRowQ6_K, ref: QuantizeRowQ6_K}, true
	case runtime.TypeQ8_K:
		return quantCodec{to: DequantizeRowQ8_K, ref: QuantizeRowQ8_K}, true
	}
	return extraCodec(typ)
}

// VecDotType is the type ggml's CPU backend quantizes (or rounds) MUL_MAT
// activations to before multiplying them with weights of type typ: q8_0
// for q4_0, q5_0, q8_0, iq4_nl, mxfp4, nvfp4, q1_0 and q2_0; q8_1 for q4_1
// and q5_1; q8_K for the k-quants, iq4_xs, the grid i-quants and the
// ternary types; the weight type itself for f16 and bf16; f32 otherwise.
func VecDotType(typ runtime.Type) runtime.Type {
	switch typ {
	case runtime.TypeQ4_0, runtime.TypeQ5_0, runtime.TypeQ8_0:
		return runtime.TypeQ8_0
	case runtime.TypeQ4_1, runtime.TypeQ5_1:
		return runtime.TypeQ8_1
	case runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K,
		runtime.TypeIQ2_XXS, runtime.TypeIQ2_XS, runtime.TypeIQ2_S, runtime.TypeIQ3_XXS, runtime.TypeIQ3_S,
		runtime.TypeIQ1_S, runtime.TypeIQ1_M, runtime.TypeIQ4_XS, runtime.TypeTQ1_0, runtime.TypeTQ2_0:
		return runtime.TypeQ8_K
	case runtime.TypeIQ4_NL, runtime.TypeMXFP4, runtime.TypeNVFP4, runtime.TypeQ1_0, runtime.TypeQ2_0:
		return runtime.TypeQ8_0
	case runtime.TypeF16, runtime.TypeBF16:
		return typ
	}
	return runtime.TypeF32
}

// FromFloatCPU converts src to type typ as ggml's CPU backend does
// (its type traits' from_float, used by CPY and for MUL_MAT activations):
// FromFloat except for q8_0, q8_1 and iq4_nl, which get the CPU quantizers.
func FromFloatCPU(typ runtime.Type, src []float32, dst []byte) error {
	switch typ {
	case runtime.TypeQ8_0:
		return QuantizeRowQ8_0CPU(src, dst)
	case runtime.TypeQ8_1:
		return QuantizeRowQ8_1CPU(src, dst)
	case runtime.TypeIQ4_NL:
		return QuantizeRowIQ4_NLCPU(src, dst)
	}
	return FromFloat(typ, src, dst)
}

// QuantizeRowQ8_0CPU quantizes x into q8_0 blocks as ggml's x86 CPU
// backend does: d = max|x|/127 (f16), q = x·(127/max|x|) rounded to
// nearest with ties to even, saturated to int8.
func QuantizeRowQ8_0CPU(x []float32, dst []byte) error {
	nb, err := checkBlocks("q8_0", len(x), len(dst), QK, BlockQ8_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk := dst[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		d, _ := q8CPUBlock(x[i*QK:(i+1)*QK], blk[2:])
		putF16(blk, d)
	}
	return nil
}

// QuantizeRowQ8_1CPU is QuantizeRowQ8_0CPU for q8_1 blocks, with
// s = d·Σq (the sum taken before saturation, as ggml's).
func QuantizeRowQ8_1CPU(x []float32, dst []byte) error {
	nb, err := checkBlocks("q8_1", len(x), len(dst), QK, BlockQ8_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk := dst[i*BlockQ8_1Size : (i+1)*BlockQ8_1Size]
		d, sum := q8CPUBlock(x[i*QK:(i+1)*QK], blk[4:])
		putF16(blk, d)
		putF16(blk[2:], d*float32(sum))
	}
	return nil
}

// q8CPUBlock writes the 32 quants of xs into q and returns the scale and
// the (wrapping, as ggml's int32 lanes) sum of the unsaturated quants.
func q8CPUBlock(xs []float32, q []byte) (float32, int32) {
	var amax float32
	for _, v := range xs {
		amax = cmax(amax, abs32(v))
	}
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	var sum int32
	for j, v := range xs {
		r := cvtps(v * id)
		sum += r
		q[j] = byte(int8(max(-128, min(127, r))))
	}
	return d, sum
}

// cvtps is x86's float-to-int32 conversion in the default rounding mode:
// nearest, ties to even; NaN and values beyond int32 give 0x80000000.
func cvtps(v float32) int32 {
	// Below 2^22 in magnitude, adding and removing 1.5·2^23 in float32
	// rounds v to an integer, nearest and ties to even, as the float64
	// round below does, at a fraction of its cost (activations are
	// quantized per MUL_MAT; see cvtpsRef in the tests).
	if v > -1<<22 && v < 1<<22 {
		return int32(float32(v+0x1.8p23) - 0x1.8p23) // the conversion forces the float32 rounding (Go may otherwise fuse)
	}
	r := math.RoundToEven(float64(v))
	if !(r >= -2147483648 && r < 2147483648) {
		return math.MinInt32
	}
	return int32(r)
}

// Quantize converts nrows rows of n elements of src to type typ in dst
// as ggml_quantize_chunk does without an importance matrix (the reference
// quantizers, which GGUF files are written with), returning the bytes
// written. n must be a multiple of typ's block size.
func Quantize(typ runtime.Type, src []float32, dst []byte, nrows, n int64) (uint64, error) {
	if !typ.IsQuantized() || !IsRowType(typ) {
		return 0, fmt.Errorf("quantize to %s: %w", typ, runtime.ErrUnsupported)
	}
	bs := typ.BlockSize()
	if n <= 0 || nrows < 0 || n%bs != 0 || nrows > int64(len(src))/n {
		return 0, fmt.Errorf("quantize %d rows of %d elements to %s from %d values: %w", nrows, n, typ, len(src), runtime.ErrShape)
	}
	rs := typ.RowSize(n)
	if uint64(nrows) > uint64(len(dst))/rs {
		return 0, fmt.Errorf("quantize %d rows of %s into %d bytes: %w", nrows, typ, len(dst), runtime.ErrShape)
	}
	total := uint64(nrows) * rs
	if err := FromFloat(typ, src[:nrows*n], dst[:total]); err != nil {
		return 0, err
	}
	return total, nil
}

// LoadRow reads row (i1, i2, i3) of tensor s (its bytes b, from its first
// byte) into row as float32: element by element for the float types (any
// stride), block by block for dense quantized rows.
func LoadRow(s *runtime.Tensor, b []byte, i1, i2, i3 int64, row []float32) error {
	if !IsRowType(s.Type) {
		return fmt.Errorf("tensor %s: read %s as f32: %w", s, s.Type, runtime.ErrUnsupported)
	}
	return loadRow(s, b, i1, i2, i3, row)
}

// RoundActivations rounds the MUL_MAT activation row x in place the way
// ggml's CPU backend does before multiplying it with weights of type typ:
// through VecDotType(typ) and back (nothing for f32 weights). len(x) must
// be a multiple of that type's block size.
func RoundActivations(typ runtime.Type, x []float32) error {
	vt := VecDotType(typ)
	if vt == runtime.TypeF32 {
		return nil
	}
	buf := make([]byte, vt.RowSize(int64(len(x))))
	if err := FromFloatCPU(vt, x, buf); err != nil {
		return err
	}
	return ToFloat(vt, buf, x)
}
