package vec

// F32ToF16 converts the leading elements of src to IEEE half precision in
// dst with the CPU's conversion instructions (rounding to nearest, ties to
// even, as ggml's CPU backend does) and returns how many it converted (at
// most min(len(dst), len(src)); 0 without F16C or on the generic level):
// the caller converts the rest. For every value but NaN the result is the
// correctly rounded half; a NaN stays a NaN of the same sign, with the
// payload the hardware gives (the top mantissa bits, made quiet).
func F32ToF16(dst []uint16, src []float32) int { return f32ToF16(dst, src) }

// F16ToF32 converts the leading elements of src from IEEE half precision
// to float32 in dst (exact) and returns how many it converted, as F32ToF16.
// A signalling NaN comes out quiet.
func F16ToF32(dst []float32, src []uint16) int { return f16ToF32(dst, src) }

// DequantQ8_0 converts the leading q8_0 blocks of src (34 bytes each: an
// f16 scale d, then 32 int8 q) to q·d in dst, 32 floats a block, with the
// CPU's vector instructions, and returns how many blocks it converted (0
// without AVX2 and F16C): the caller converts the rest. The results are
// those of the scalar dequantization (the products are the same IEEE
// operations).
func DequantQ8_0(dst []float32, src []byte) int { return dequantQ8_0(dst, src) }
