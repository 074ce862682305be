package cpukernels

import (
	"encoding/binary"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the quantizers of the block types of quants_iq.go that
// ggml's CPU backend can write (its type traits' from_float): iq4_nl,
// iq4_xs, tq1_0, tq2_0, mxfp4, nvfp4, q1_0, q2_0, each following ggml's C
// (ggml-quants.c) step by step. ggml has no from_float for iq2_xxs,
// iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s and iq1_m (their quantizers search
// grids with an importance matrix; ggml's CPU backend refuses CPY and
// SET_ROWS into them), and neither has gogml: CanQuantize reports false.

// cvttI32 is C's (int) conversion of a float32 as x86 performs it
// (truncation; NaN and values outside int32 give math.MinInt32).
func cvttI32(v float32) int32 {
	if !(v >= -2147483648 && v < 2147483648) {
		return math.MinInt32
	}
	return int32(v)
}

// lroundI is C's (int)lroundf(v) as glibc on x86-64 computes it: rounding
// halves away from zero; NaN and values outside int64 give LONG_MIN, whose
// low 32 bits are 0.
func lroundI(v float32) int32 {
	r := math.Round(float64(v))
	if !(r >= -9223372036854775808 && r < 9223372036854775808) {
		return 0
	}
	return int32(int64(r))
}

// QuantizeRowQ1_0 is ggml's quantize_row_q1_0_ref: per block of 128,
// d = mean |x| (f16), and bit j set where x[j] ≥ 0.
func QuantizeRowQ1_0(x []float32, dst []byte) error {
	nb, err := checkBlocks("q1_0", len(x), len(dst), qkQ1_0, BlockQ1_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*qkQ1_0:(i+1)*qkQ1_0], dst[i*BlockQ1_0Size:(i+1)*BlockQ1_0Size]
		var sum float32
		for _, v := range xs {
			sum += abs32(v)
		}
		putF16(blk, sum/qkQ1_0)
		clear(blk[2:])
		for j, v := range xs {
			if v >= 0 {
				blk[2+j/8] |= 1 << uint(j%8)
			}
		}
	}
	return nil
}

// QuantizeRowQ2_0 is ggml's quantize_row_q2_0_ref: per block of 64,
// d = max |x| (f16), code = round(x/d)+1 (halves away from zero) clamped to
// [0, 3], four codes a byte from the low bits up.
func QuantizeRowQ2_0(x []float32, dst []byte) error {
	nb, err := checkBlocks("q2_0", len(x), len(dst), qkQ2_0, BlockQ2_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*qkQ2_0:(i+1)*qkQ2_0], dst[i*BlockQ2_0Size:(i+1)*BlockQ2_0Size]
		var amax float32
		for _, v := range xs {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		id := inv(amax)
		putF16(blk, amax)
		clear(blk[2:])
		for j, v := range xs {
			q := clampI(cvttI32(float32(math.Round(float64(v*id))))+1, 0, 3)
			blk[2+j/4] |= byte(q) << (2 * uint(j%4))
		}
	}
	return nil
}

// ternaryScale returns the largest magnitude of xs and its inverse (0 for
// a zero block), as ggml's tq1_0 and tq2_0 quantizers take them.
func ternaryScale(xs []float32) (d, id float32) {
	for _, v := range xs {
		if a := abs32(v); !(d > a) { // C's MAX(d, a): NaN wins
			d = a
		}
	}
	return d, inv(d)
}

// tritOf is a value's ternary digit: round(v·id)+1 (0, 1 or 2 for
// |v| ≤ 1/id), as a byte that wraps like ggml's uint8_t sums.
func tritOf(v, id float32) byte { return byte(lroundI(v*id) + 1) }

// packTrits folds digits into a byte as ggml's tq1_0 does: base 3, then
// scaled to a fixed-point fraction of 3^5, rounded up.
func packTrits(q byte) byte { return byte((int(q)*256 + 242) / 243) }

// QuantizeRowTQ1_0 is ggml's quantize_row_tq1_0_ref: d = max |x|, ternary
// digits round(x/d)+1, five per byte of qs (the first 32 bytes take
// elements m+32n of the first 160, the next 16 elements m+16n of the next
// 80) and four per byte of qh (elements j+4m of the last 16).
func QuantizeRowTQ1_0(x []float32, dst []byte) error {
	nb, err := checkBlocks("tq1_0", len(x), len(dst), QKK, BlockTQ1_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockTQ1_0Size:(i+1)*BlockTQ1_0Size]
		d, id := ternaryScale(xs)
		putF16(blk[52:], d)
		for m := 0; m < 32; m++ {
			var q byte
			for n := 0; n < 5; n++ {
				q = q*3 + tritOf(xs[m+32*n], id)
			}
			blk[m] = packTrits(q)
		}
		for m := 0; m < 16; m++ {
			var q byte
			for n := 0; n < 5; n++ {
				q = q*3 + tritOf(xs[160+m+16*n], id)
			}
			blk[32+m] = packTrits(q)
		}
		for j := 0; j < 4; j++ {
			var q byte
			for m := 0; m < 4; m++ {
				q = q*3 + tritOf(xs[240+j+4*m], id)
			}
			blk[48+j] = packTrits(q * 3)
		}
	}
	return nil
}

// QuantizeRowTQ2_0 is ggml's quantize_row_tq2_0_ref: d = max |x|, codes
// round(x/d)+1, byte m of each 32 holding elements m, m+32, m+64, m+96 of
// its 128 from the low bits up.
func QuantizeRowTQ2_0(x []float32, dst []byte) error {
	nb, err := checkBlocks("tq2_0", len(x), len(dst), QKK, BlockTQ2_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockTQ2_0Size:(i+1)*BlockTQ2_0Size]
		d, id := ternaryScale(xs)
		putF16(blk[64:], d)
		for j := 0; j < 64; j += 32 {
			for m := 0; m < 32; m++ {
				var q byte
				for n := 0; n < 4; n++ {
					q += (tritOf(xs[4*j+m+32*n], id) & 3) << (2 * uint(n))
				}
				blk[j+m] = q
			}
		}
	}
	return nil
}

// bestFP4 is ggml's best_index_mxfp4: the index of the doubled E2M1 level
// nearest x/e (the first on ties).
func bestFP4(x, e float32) byte {
	best := 0
	bestErr := abs32(float32(float32(kvaluesFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(kvaluesFP4[i])*e) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return byte(best)
}

// QuantizeRowMXFP4 is ggml's quantize_row_mxfp4_ref: per block of 32 the
// E8M0 exponent floor(log2(max|x|)) - 2 + 127, then each value's nearest
// level.
func QuantizeRowMXFP4(x []float32, dst []byte) error {
	nb, err := checkBlocks("mxfp4", len(x), len(dst), QK, BlockMXFP4Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QK:(i+1)*QK], dst[i*BlockMXFP4Size:(i+1)*BlockMXFP4Size]
		var amax float32
		for _, v := range xs {
			if amax < abs32(v) {
				amax = abs32(v)
			}
		}
		var e byte
		if amax > 0 {
			// log2f rounded to float32, as C computes it, before the floor.
			l := float32(math.Log2(float64(amax)))
			e = byte(cvttI32(float32(math.Floor(float64(l))) - 2 + 127))
		}
		d := e8m0Half(e)
		blk[0] = e
		for j := 0; j < QK/2; j++ {
			blk[1+j] = bestFP4(xs[j], d) | bestFP4(xs[j+QK/2], d)<<4
		}
	}
	return nil
}

// f32ToUE4M3 is ggml's ggml_fp32_to_ue4m3: x (clamped to 448) as an
// unsigned E4M3 byte, rounding the mantissa half up; 0 for x ≤ 0 or NaN,
// 0x7e for overflow.
func f32ToUE4M3(x float32) byte {
	if !(x > 0) {
		return 0
	}
	x = min(x, 448)
	bits := math.Float32bits(x)
	exp := int(bits>>23&0xff) - 127 + 7
	man := int(bits >> 20 & 7)
	if exp <= 0 {
		m := cvttI32(x*512 + 0.5)
		if m > 7 {
			m = 7
		}
		if m < 1 {
			return 0
		}
		return byte(m)
	}
	if exp >= 15 {
		return 0x7e
	}
	man += int(bits >> 19 & 1)
	if man > 7 {
		man = 0
		exp++
		if exp >= 15 {
			return 0x7e
		}
	}
	return byte(exp<<3 | man)
}

// QuantizeRowNVFP4 is ggml's quantize_row_nvfp4_ref: per 16 elements the
// UE4M3 scale of max|x|/6, then each value's nearest level.
func QuantizeRowNVFP4(x []float32, dst []byte) error {
	nb, err := checkBlocks("nvfp4", len(x), len(dst), qkNVFP4, BlockNVFP4Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk := dst[i*BlockNVFP4Size : (i+1)*BlockNVFP4Size]
		for s := 0; s < 4; s++ {
			xb := x[i*qkNVFP4+16*s : i*qkNVFP4+16*s+16]
			var amax float32
			for _, v := range xb {
				if amax < abs32(v) {
					amax = abs32(v)
				}
			}
			ue := f32ToUE4M3(amax / 6)
			blk[s] = ue
			d := ue4m3ToF32(ue)
			for j := 0; j < 8; j++ {
				blk[4+8*s+j] = bestFP4(xb[j], d) | bestFP4(xb[8+j], d)<<4
			}
		}
	}
	return nil
}

// bestIQ4 is ggml's best_index_int8 over kvaluesIQ4NL: the index of the
// level nearest x (the upper one on ties; the last for NaN).
func bestIQ4(x float32) byte {
	kv := &kvaluesIQ4NL
	if x <= float32(kv[0]) {
		return 0
	}
	if x >= float32(kv[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(kv[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(kv[mu-1]) < float32(kv[mu])-x {
		return byte(mu - 1)
	}
	return byte(mu)
}

// iq4Fit is the weighted least-squares fit of ggml's iq4 quantizers for
// one block of 32: the levels of x at inverse scale id into L (when L is
// not nil), and Σw·q·x, Σw·q² with the weights w = x².
func iq4Fit(xb []float32, id float32, L []byte) (sumqx, sumq2 float32) {
	for j, v := range xb {
		l := bestIQ4(id * v)
		if L != nil {
			L[j] = l
		}
		q := float32(kvaluesIQ4NL[l])
		w := float32(v * v)
		sumqx += float32(w * q * v)
		sumq2 += float32(w * q * q)
	}
	return sumqx, sumq2
}

// iq4Block is ggml's quantize_row_iq4_nl_impl without an importance
// matrix, for a super-block x of n = len(x) elements in blocks of 32 (one
// block for iq4_nl, eight for iq4_xs) and ntry scale trials (7, or -1 for
// the CPU backend's iq4_nl, which keeps the first fit's levels). It fills
// L (n levels; a block below ggml's GROUP_MAX_EPS keeps L's old contents,
// as ggml's reused stack buffer does) and q4 (n/2 bytes, element j of a
// block of 32 in the low nibble of byte j), and returns the super-block
// scale and, for n > 32, the 6-bit block scales split into their high bits
// sh and low nibbles sl.
func iq4Block(x []float32, ntry int, L, q4 []byte, sl []byte) (dh float32, sh uint16) {
	n := len(x)
	nblk := n / 32
	var scales [QKK / 32]float32
	v0 := float32(kvaluesIQ4NL[0])
	var maxScale, amaxScale float32
	for ib := 0; ib < nblk; ib++ {
		xb, Lb := x[32*ib:32*ib+32], L[32*ib:32*ib+32]
		var amax, mx float32
		for _, v := range xb {
			if ax := abs32(v); ax > amax {
				amax, mx = ax, v
			}
		}
		if amax < groupMaxEps {
			scales[ib] = 0
			continue
		}
		d := mx / v0
		if ntry > 0 {
			d = -mx / v0
		}
		sumqx, sumq2 := iq4Fit(xb, 1/d, Lb)
		d = 0
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		best := float32(d * sumqx)
		for itry := -ntry; itry <= ntry; itry++ {
			id := (float32(itry) + v0) / mx
			sumqx, sumq2 = iq4Fit(xb, id, nil)
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				d = sumqx / sumq2
				best = float32(d * sumqx)
			}
		}
		scales[ib] = d
		if ad := abs32(d); ad > amaxScale {
			amaxScale, maxScale = ad, d
		}
	}
	if nblk > 1 {
		d := -maxScale / 32
		dh = d
		var id float32
		if d != 0 {
			id = 1 / d
		}
		clear(sl[:nblk/2])
		for ib := 0; ib < nblk; ib++ {
			l := clampI(nearestInt(id*scales[ib]), -32, 31)
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			for j := 32 * ib; j < 32*ib+32; j++ {
				L[j] = bestIQ4(idl * x[j])
			}
			l += 32
			sl[ib/2] |= byte(l&0xf) << (4 * uint(ib%2))
			sh |= uint16(l>>4) << (2 * uint(ib%8))
		}
	} else {
		dh = scales[0]
		if ntry > 0 {
			var id float32
			if scales[0] != 0 {
				id = 1 / scales[0]
			}
			for j := range x {
				L[j] = bestIQ4(id * x[j])
			}
		}
	}
	for i := 0; i < n/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
	return dh, sh
}

// QuantizeRowIQ4_NL is ggml's quantize_iq4_nl without an importance
// matrix (what ggml_quantize_chunk writes): per block of 32 the best of
// fifteen scale trials.
func QuantizeRowIQ4_NL(x []float32, dst []byte) error {
	return quantizeIQ4NL(x, dst, 7)
}

// QuantizeRowIQ4_NLCPU is ggml's quantize_row_iq4_nl_ref, the CPU
// backend's from_float: one fit per block, whose levels it keeps.
func QuantizeRowIQ4_NLCPU(x []float32, dst []byte) error {
	return quantizeIQ4NL(x, dst, -1)
}

func quantizeIQ4NL(x []float32, dst []byte, ntry int) error {
	nb, err := checkBlocks("iq4_nl", len(x), len(dst), QK, BlockIQ4_NLSize)
	if err != nil {
		return err
	}
	var L [QK]byte // carried from block to block, as ggml's
	for i := 0; i < nb; i++ {
		blk := dst[i*BlockIQ4_NLSize : (i+1)*BlockIQ4_NLSize]
		d, _ := iq4Block(x[i*QK:(i+1)*QK], ntry, L[:], blk[2:], nil)
		putF16(blk, d)
	}
	return nil
}

// QuantizeRowIQ4_XS is ggml's quantize_iq4_xs without an importance
// matrix (both ggml_quantize_chunk's and the CPU backend's quantizer).
func QuantizeRowIQ4_XS(x []float32, dst []byte) error {
	nb, err := checkBlocks("iq4_xs", len(x), len(dst), QKK, BlockIQ4_XSSize)
	if err != nil {
		return err
	}
	var L [QKK]byte
	for i := 0; i < nb; i++ {
		blk := dst[i*BlockIQ4_XSSize : (i+1)*BlockIQ4_XSSize]
		d, sh := iq4Block(x[i*QKK:(i+1)*QKK], 7, L[:], blk[8:], blk[4:8])
		putF16(blk, d)
		binary.LittleEndian.PutUint16(blk[2:], sh)
	}
	return nil
}

// extraCodec returns the conversions of the block types of quants_iq.go
// (a nil ref where ggml has no quantizer), or false.
func extraCodec(typ runtime.Type) (quantCodec, bool) {
	switch typ {
	case runtime.TypeIQ2_XXS:
		return quantCodec{to: DequantizeRowIQ2_XXS}, true
	case runtime.TypeIQ2_XS:
		return quantCodec{to: DequantizeRowIQ2_XS}, true
	case runtime.TypeIQ2_S:
		return quantCodec{to: DequantizeRowIQ2_S}, true
	case runtime.TypeIQ3_XXS:
		return quantCodec{to: DequantizeRowIQ3_XXS}, true
	case runtime.TypeIQ3_S:
		return quantCodec{to: DequantizeRowIQ3_S}, true
	case runtime.TypeIQ1_S:
		return quantCodec{to: DequantizeRowIQ1_S}, true
	case runtime.TypeIQ1_M:
		return quantCodec{to: DequantizeRowIQ1_M}, true
	case runtime.TypeIQ4_NL:
		return quantCodec{to: DequantizeRowIQ4_NL, ref: QuantizeRowIQ4_NL}, true
	case runtime.TypeIQ4_XS:
		return quantCodec{to: DequantizeRowIQ4_XS, ref: QuantizeRowIQ4_XS}, true
	case runtime.TypeTQ1_0:
		return quantCodec{to: DequantizeRowTQ1_0, ref: QuantizeRowTQ1_0}, true
	case runtime.TypeTQ2_0:
		return quantCodec{to: DequantizeRowTQ2_0, ref: QuantizeRowTQ2_0}, true
	case runtime.TypeMXFP4:
		return quantCodec{to: DequantizeRowMXFP4, ref: QuantizeRowMXFP4}, true
	case runtime.TypeNVFP4:
		return quantCodec{to: DequantizeRowNVFP4, ref: QuantizeRowNVFP4}, true
	case runtime.TypeQ1_0:
		return quantCodec{to: DequantizeRowQ1_0, ref: QuantizeRowQ1_0}, true
	case runtime.TypeQ2_0:
		return quantCodec{to: DequantizeRowQ2_0, ref: QuantizeRowQ2_0}, true
	}
	return quantCodec{}, false
}

// CanQuantize reports whether FromFloat and FromFloatCPU can write typ:
// every type IsRowType accepts except the i-quants ggml has no quantizer
// (from_float) for: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m.
func CanQuantize(typ runtime.Type) bool {
	if c, ok := extraCodec(typ); ok {
		return c.ref != nil
	}
	return IsRowType(typ)
}
