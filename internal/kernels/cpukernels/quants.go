package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the block types besides q4_0 and q8_0: q4_1, q5_0,
// q5_1, q8_1 (blocks of 32) and the k-quants q2_K..q6_K, q8_K (super-blocks
// of 256), with ggml's byte layouts, reference quantizers (what
// ggml_quantize_chunk writes without an importance matrix) and
// dequantizers. Every float operation follows ggml's C in order and
// precision; products that feed a sum are wrapped in float32() so that a
// compiler allowed to fuse multiply-adds (GOAMD64=v3) still rounds each
// step as C does.

// QKK is the number of elements in a k-quant super-block.
const QKK = 256

// Bytes per block of the types below, as ggml-common.h lays them out.
const (
	BlockQ4_1Size = 2*2 + QK/2         // d, m (f16), 16 bytes of nibbles
	BlockQ5_0Size = 2 + 4 + QK/2       // d (f16), qh[4], qs[16]
	BlockQ5_1Size = 2*2 + 4 + QK/2     // d, m (f16), qh[4], qs[16]
	BlockQ8_1Size = 2*2 + QK           // d, s = d·Σq (f16), qs[32]
	BlockQ2_KSize = QKK/16 + QKK/4 + 4 // scales[16], qs[64], d, dmin
	BlockQ3_KSize = QKK/8 + QKK/4 + 12 + 2
	BlockQ4_KSize = 4 + 12 + QKK/2
	BlockQ5_KSize = 4 + 12 + QKK/8 + QKK/2
	BlockQ6_KSize = QKK/2 + QKK/4 + QKK/16 + 2
	BlockQ8_KSize = 4 + QKK + QKK/16*2 // d (f32), qs[256], bsums[16] (int16)
)

// groupMaxEps is ggml's GROUP_MAX_EPS: groups whose largest magnitude is
// below it quantize to zero.
const groupMaxEps = 1e-15

// nearestInt rounds f to the nearest integer with ties to even, the way
// ggml's nearest_int does (valid for |f| ≤ 4194303, like ggml's).
func nearestInt(f float32) int32 {
	v := f + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

func clampI(v, lo, hi int32) int32 { return max(lo, min(hi, v)) }

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }
func getF16(b []byte) float32    { return F16ToF32(binary.LittleEndian.Uint16(b)) }

// checkBlocks validates a row of n elements in blocks of qk elements of bs
// bytes against a buffer of lb bytes.
func checkBlocks(name string, n, lb, qk, bs int) (int, error) {
	nb := n / qk
	if n%qk != 0 || lb < nb*bs {
		return 0, fmt.Errorf("%s: %d elements and %d bytes: %w", name, n, lb, runtime.ErrShape)
	}
	return nb, nil
}

// QuantizeRowQ4_1 is ggml's quantize_row_q4_1_ref: per block of 32,
// d = (max-min)/15 and m = min (both f16), q = min(15, trunc((x-min)/d + 0.5)).
func QuantizeRowQ4_1(x []float32, dst []byte) error {
	nb, err := checkBlocks("q4_1", len(x), len(dst), QK, BlockQ4_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QK:(i+1)*QK], dst[i*BlockQ4_1Size:(i+1)*BlockQ4_1Size]
		mn, mx := minMax(xs)
		d := (mx - mn) / 15
		id := inv(d)
		putF16(blk, d)
		putF16(blk[2:], mn)
		for j := 0; j < QK/2; j++ {
			q0 := uint8(min(15, truncI8((xs[j]-mn)*id+0.5)))
			q1 := uint8(min(15, truncI8((xs[j+QK/2]-mn)*id+0.5)))
			blk[4+j] = q0 | q1<<4
		}
	}
	return nil
}

// QuantizeRowQ5_0 is ggml's quantize_row_q5_0_ref: d = m/-16 for the
// element m of largest magnitude, q = min(31, trunc(x/d + 16.5)); the low
// nibbles go to qs, the fifth bits of elements j and j+16 to bits j and
// j+16 of the little-endian qh.
func QuantizeRowQ5_0(x []float32, dst []byte) error {
	nb, err := checkBlocks("q5_0", len(x), len(dst), QK, BlockQ5_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QK:(i+1)*QK], dst[i*BlockQ5_0Size:(i+1)*BlockQ5_0Size]
		var amax, m float32
		for _, v := range xs {
			if amax < abs32(v) {
				amax, m = abs32(v), v
			}
		}
		d := m / -16
		id := inv(d)
		putF16(blk, d)
		var qh uint32
		for j := 0; j < QK/2; j++ {
			q0 := uint8(min(31, truncI8(xs[j]*id+16.5)))
			q1 := uint8(min(31, truncI8(xs[j+QK/2]*id+16.5)))
			blk[6+j] = q0&0xf | (q1&0xf)<<4
			qh |= uint32((q0&0x10)>>4) << j
			qh |= uint32((q1&0x10)>>4) << (j + QK/2)
		}
		binary.LittleEndian.PutUint32(blk[2:], qh)
	}
	return nil
}

// QuantizeRowQ5_1 is ggml's quantize_row_q5_1_ref: d = (max-min)/31,
// m = min, q = trunc((x-min)/d + 0.5) (no cap, as ggml), bits as q5_0.
func QuantizeRowQ5_1(x []float32, dst []byte) error {
	nb, err := checkBlocks("q5_1", len(x), len(dst), QK, BlockQ5_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QK:(i+1)*QK], dst[i*BlockQ5_1Size:(i+1)*BlockQ5_1Size]
		mn, mx := minMax(xs)
		d := (mx - mn) / 31
		id := inv(d)
		putF16(blk, d)
		putF16(blk[2:], mn)
		var qh uint32
		for j := 0; j < QK/2; j++ {
			q0 := truncU8((xs[j]-mn)*id + 0.5)
			q1 := truncU8((xs[j+QK/2]-mn)*id + 0.5)
			blk[8+j] = q0&0xf | (q1&0xf)<<4
			qh |= uint32((q0&0x10)>>4) << j
			qh |= uint32((q1&0x10)>>4) << (j + QK/2)
		}
		binary.LittleEndian.PutUint32(blk[4:], qh)
	}
	return nil
}

// QuantizeRowQ8_1 is ggml's quantize_row_q8_1_ref: q8_0's reference
// rounding (halves away from zero) plus s = d·Σq as f16.
func QuantizeRowQ8_1(x []float32, dst []byte) error {
	nb, err := checkBlocks("q8_1", len(x), len(dst), QK, BlockQ8_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QK:(i+1)*QK], dst[i*BlockQ8_1Size:(i+1)*BlockQ8_1Size]
		var amax float32
		for _, v := range xs {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		id := inv(d)
		putF16(blk, d)
		var sum int32
		for j, v := range xs {
			q := int8(roundAway(v * id))
			blk[4+j] = byte(q)
			sum += int32(q)
		}
		putF16(blk[2:], float32(sum)*d)
	}
	return nil
}

// roundAway is C's roundf converted to int (halves away from zero);
// values beyond int32 give 0x80000000 as x86's conversion does.
func roundAway(v float32) int32 {
	r := math.Round(float64(v))
	if !(r >= -2147483648 && r < 2147483648) {
		return math.MinInt32
	}
	return int32(r)
}

// QuantizeRowQ8_K is ggml's quantize_row_q8_K_ref, which is also the CPU
// backend's q8_K activation quantizer: iscale = -127/m for the element m of
// largest magnitude, q = min(127, nearest(iscale·x)), d = 1/iscale as f32,
// and the sums of each 16 quants.
func QuantizeRowQ8_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q8_K", len(x), len(dst), QKK, BlockQ8_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ8_KSize:(i+1)*BlockQ8_KSize]
		var amax, m float32
		for _, v := range xs {
			if ax := abs32(v); ax > amax {
				amax, m = ax, v
			}
		}
		if amax == 0 {
			clear(blk[:4+QKK]) // ggml leaves bsums as they were: zero them
			clear(blk[4+QKK:])
			continue
		}
		iscale := -127 / m
		qs := blk[4 : 4+QKK]
		for j, v := range xs {
			qs[j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := 0; j < QKK/16; j++ {
			var s int32
			for _, q := range qs[16*j : 16*j+16] {
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(blk[4+QKK+2*j:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(blk, math.Float32bits(1/iscale))
	}
	return nil
}

// makeQkx2Quants is ggml's make_qkx2_quants: an asymmetric quantization of
// x to [0, nmax] with weights w, searching nstep+1 scales around the
// min-max one. It returns the scale and the (negated) minimum.
func makeQkx2Quants(nmax int32, x, w []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	mn, mx := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		mn = cmin(mn, x[i])
		mx = cmax(mx, x[i])
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L[:len(x)])
		return 0, -mn
	}
	nm := float32(nmax)
	iscale := nm / (mx - mn)
	scale = 1 / iscale
	errOf := func(s, m float32, l uint8, xi, wi float32) float32 {
		diff := float32(float32(s*float32(l))+m) - xi
		if useMad {
			diff = abs32(diff)
		} else {
			diff = float32(diff * diff)
		}
		return float32(wi * diff)
	}
	var bestErr float32
	for i, xi := range x {
		L[i] = uint8(clampI(nearestInt(iscale*(xi-mn)), 0, nmax))
		bestErr += errOf(scale, mn, L[i], xi, w[i])
	}
	if nstep < 1 {
		return scale, -mn
	}
	for is := 0; is <= nstep; is++ {
		iscale = (float32(rmin+float32(rdelta*float32(is))) + nm) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i, xi := range x {
			l := clampI(nearestInt(iscale*(xi-mn)), 0, nmax)
			Laux[i] = uint8(l)
			fl := float32(l)
			wl := float32(w[i] * fl)
			sumL += wl
			sumL2 += float32(wl * fl)
			sumXL += float32(wl * xi)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var cur float32
			for i, xi := range x {
				cur += errOf(thisScale, thisMin, Laux[i], xi, w[i])
			}
			if cur < bestErr {
				copy(L[:len(x)], Laux[:len(x)])
				bestErr, scale, mn = cur, thisScale, thisMin
			}
		}
	}
	return scale, -mn
}

// makeQxQuants is ggml's make_qx_quants with rmse_type 1 and no
// importance weights (the only form the reference quantizers use): a
// symmetric quantization of x to [-nmax, nmax-1], stored offset by nmax.
func makeQxQuants(nmax int32, x []float32, L []int8) float32 {
	var m, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, m = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	nm := float32(nmax)
	sums := func(iscale float32) (sumlx, suml2 float32) {
		for _, v := range x {
			l := float32(clampI(nearestInt(iscale*v), -nmax, nmax-1))
			w := float32(v * v)
			sumlx += float32(float32(w*v) * l)
			suml2 += float32(float32(w*l) * l)
		}
		return
	}
	store := func(iscale float32) {
		for i, v := range x {
			L[i] = int8(nmax + clampI(nearestInt(iscale*v), -nmax, nmax-1))
		}
	}
	iscale := -nm / m
	sumlx, suml2 := sums(iscale)
	store(iscale)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(nm + float32(0.1*float32(is))) / m
		sumlx, suml2 = sums(iscale)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			store(iscale)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: a symmetric
// quantization to [-nmax, nmax-1] refined element by element, stored
// offset by nmax.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	var m, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, m = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := -float32(nmax) / m
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampI(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				nl := clampI(nearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
				if nl != int32(L[i]) {
					fl := float32(nl)
					slx += float32(float32(w*v) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// QuantizeRowQ2_K is ggml's quantize_row_q2_K_ref.
func QuantizeRowQ2_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q2_K", len(x), len(dst), QKK, BlockQ2_KSize)
	if err != nil {
		return err
	}
	var L [QKK]uint8
	var Laux [16]uint8
	var w [16]float32
	var mins, scales [QKK / 16]float32
	const q4scale = 15
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ2_KSize:(i+1)*BlockQ2_KSize]
		sc, qs := blk[:16], blk[16:80]
		var maxScale, maxMin float32
		for j := 0; j < QKK/16; j++ {
			xj := xs[16*j : 16*j+16]
			for l := range w {
				w[l] = abs32(xj[l])
			}
			scales[j], mins[j] = makeQkx2Quants(3, xj, w[:], L[16*j:], Laux[:], -0.5, 0.1, 15, true)
			maxScale = cmax(maxScale, scales[j])
			maxMin = cmax(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range scales {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(blk[80:], maxScale/q4scale)
		} else {
			clear(sc)
			putF16(blk[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range mins {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(blk[82:], maxMin/q4scale)
		} else {
			putF16(blk[82:], 0)
		}
		dAll, mAll := getF16(blk[80:]), getF16(blk[82:])
		for j := 0; j < QKK/16; j++ {
			d := dAll * float32(sc[j]&0xf)
			if d == 0 {
				continue
			}
			dm := mAll * float32(sc[j]>>4)
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = uint8(clampI(nearestInt((xs[16*j+ii]+dm)/d), 0, 3))
			}
		}
		for j := 0; j < QKK; j += 128 {
			for l := 0; l < 32; l++ {
				qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
			}
		}
	}
	return nil
}

// QuantizeRowQ3_K is ggml's quantize_row_q3_K_ref.
func QuantizeRowQ3_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q3_K", len(x), len(dst), QKK, BlockQ3_KSize)
	if err != nil {
		return err
	}
	var L [QKK]int8
	var scales [QKK / 16]float32
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ3_KSize:(i+1)*BlockQ3_KSize]
		hmask, qs, sc := blk[:32], blk[32:96], blk[96:108]
		var maxScale, amax float32
		for j := 0; j < QKK/16; j++ {
			scales[j] = makeQ3Quants(4, xs[16*j:16*j+16], L[16*j:])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < QKK/16; j++ {
				l := int8(nearestInt(iscale * scales[j]))
				l = int8(clampI(int32(l), -32, 31)) + 32
				if j < 8 {
					sc[j] = uint8(l) & 0xf
				} else {
					sc[j-8] |= (uint8(l) & 0xf) << 4
				}
				l >>= 4
				sc[j%4+8] |= uint8(l) << (2 * (j / 4))
			}
			putF16(blk[108:], 1/iscale)
		} else {
			putF16(blk[108:], 0)
		}
		dAll := getF16(blk[108:])
		for j := 0; j < QKK/16; j++ {
			s := Q3KScale(sc, j)
			d := dAll * float32(s)
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = int8(clampI(nearestInt(xs[16*j+ii]/d), -4, 3) + 4)
			}
		}
		clear(hmask)
		m, hm := 0, uint8(1)
		for j := 0; j < QKK; j++ {
			if L[j] > 3 {
				hmask[m] |= hm
				L[j] -= 4
			}
			if m++; m == QKK/8 {
				m, hm = 0, hm<<1
			}
		}
		for j := 0; j < QKK; j += 128 {
			for l := 0; l < 32; l++ {
				qs[j/4+l] = uint8(L[j+l]) | uint8(L[j+l+32])<<2 | uint8(L[j+l+64])<<4 | uint8(L[j+l+96])<<6
			}
		}
	}
	return nil
}

// Q3KScale unpacks the j-th 6-bit scale from the 12 scale bytes sc of a
// q3_K block, minus 32.
func Q3KScale(sc []byte, j int) int8 {
	var s uint8
	if j < 8 {
		s = sc[j] & 0xf
	} else {
		s = sc[j-8] >> 4
	}
	return int8(s|((sc[8+j%4]>>(2*(j/4)))&3)<<4) - 32
}

// K4ScaleMin unpacks the j-th 6-bit scale and min from the 12 scale bytes
// q of a q4_K or q5_K block (ggml's get_scale_min_k4).
func K4ScaleMin(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// quantizeK45 is the part q4_K and q5_K share: per sub-block of 32 a
// weighted asymmetric quantization, the scales and mins packed in 6 bits,
// then L re-derived from the packed scales. It writes d, dmin and scales.
func quantizeK45(xs []float32, blk []byte, L *[QKK]uint8, nmax int32, rmin float32, nstep int) {
	var Laux [32]uint8
	var w [32]float32
	var mins, scales [QKK / 32]float32
	var maxScale, maxMin float32
	for j := 0; j < QKK/32; j++ {
		xj := xs[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xj {
			sumX2 += float32(v * v)
		}
		av := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xj {
			w[l] = av + abs32(v)
		}
		scales[j], mins[j] = makeQkx2Quants(nmax, xj, w[:], L[32*j:], Laux[:], rmin, 0.1, nstep, false)
		maxScale = cmax(maxScale, scales[j])
		maxMin = cmax(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := blk[4:16]
	for j := 0; j < QKK/32; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&0xf | (lm&0xf)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	putF16(blk, maxScale/63)
	putF16(blk[2:], maxMin/63)
	dAll, mAll := getF16(blk), getF16(blk[2:])
	for j := 0; j < QKK/32; j++ {
		s, m := K4ScaleMin(j, sc)
		d := dAll * float32(s)
		if d == 0 {
			continue
		}
		dm := mAll * float32(m)
		for ii := 0; ii < 32; ii++ {
			L[32*j+ii] = uint8(clampI(nearestInt((xs[32*j+ii]+dm)/d), 0, nmax))
		}
	}
}

// QuantizeRowQ4_K is ggml's quantize_row_q4_K_ref.
func QuantizeRowQ4_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q4_K", len(x), len(dst), QKK, BlockQ4_KSize)
	if err != nil {
		return err
	}
	var L [QKK]uint8
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ4_KSize:(i+1)*BlockQ4_KSize]
		clear(blk[4:16])
		quantizeK45(xs, blk, &L, 15, -1, 20)
		q := blk[16:]
		for j := 0; j < QKK; j += 64 {
			for l := 0; l < 32; l++ {
				q[j/2+l] = L[j+l] | L[j+l+32]<<4
			}
		}
	}
	return nil
}

// QuantizeRowQ5_K is ggml's quantize_row_q5_K_ref.
func QuantizeRowQ5_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q5_K", len(x), len(dst), QKK, BlockQ5_KSize)
	if err != nil {
		return err
	}
	var L [QKK]uint8
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ5_KSize:(i+1)*BlockQ5_KSize]
		clear(blk[4:16])
		quantizeK45(xs, blk, &L, 31, -0.5, 15)
		qh, ql := blk[16:48], blk[48:]
		clear(qh)
		m1, m2 := uint8(1), uint8(2)
		for n := 0; n < QKK; n += 64 {
			for j := 0; j < 32; j++ {
				l1, l2 := L[n+j], L[n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[n/2+j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
		}
	}
	return nil
}

// QuantizeRowQ6_K is ggml's quantize_row_q6_K_ref.
func QuantizeRowQ6_K(x []float32, dst []byte) error {
	nb, err := checkBlocks("q6_K", len(x), len(dst), QKK, BlockQ6_KSize)
	if err != nil {
		return err
	}
	var L [QKK]int8
	var scales [QKK / 16]float32
	for i := 0; i < nb; i++ {
		xs, blk := x[i*QKK:(i+1)*QKK], dst[i*BlockQ6_KSize:(i+1)*BlockQ6_KSize]
		ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
		var maxScale, maxAbs float32
		for ib := 0; ib < QKK/16; ib++ {
			scales[ib] = makeQxQuants(32, xs[16*ib:16*ib+16], L[16*ib:])
			if a := abs32(scales[ib]); a > maxAbs {
				maxAbs, maxScale = a, scales[ib]
			}
		}
		if maxAbs < groupMaxEps {
			clear(blk)
			continue
		}
		iscale := -128 / maxScale
		putF16(blk[208:], 1/iscale)
		for ib := range scales {
			sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		dAll := getF16(blk[208:])
		for j := 0; j < QKK/16; j++ {
			d := dAll * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = int8(clampI(nearestInt(xs[16*j+ii]/d), -32, 31) + 32)
			}
		}
		for j := 0; j < QKK; j += 128 {
			o, oh := j/2, j/4
			for l := 0; l < 32; l++ {
				q1, q2 := uint8(L[j+l])&0xf, uint8(L[j+l+32])&0xf
				q3, q4 := uint8(L[j+l+64])&0xf, uint8(L[j+l+96])&0xf
				ql[o+l] = q1 | q3<<4
				ql[o+l+32] = q2 | q4<<4
				qh[oh+l] = uint8(L[j+l])>>4 | (uint8(L[j+l+32])>>4)<<2 | (uint8(L[j+l+64])>>4)<<4 | (uint8(L[j+l+96])>>4)<<6
			}
		}
	}
	return nil
}

// Dequantizers, ggml's dequantize_row_* in their float order.

// DequantizeRowQ4_1 expands q4_1 blocks into y: d·q + m.
func DequantizeRowQ4_1(src []byte, y []float32) error {
	nb, err := checkBlocks("q4_1", len(y), len(src), QK, BlockQ4_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ4_1Size:], y[i*QK:(i+1)*QK]
		d, m := getF16(blk), getF16(blk[2:])
		for j := 0; j < QK/2; j++ {
			ys[j] = float32(float32(blk[4+j]&0xf)*d) + m
			ys[j+QK/2] = float32(float32(blk[4+j]>>4)*d) + m
		}
	}
	return nil
}

// q5Bits returns the 5-bit quants j and j+16 of a q5_0/q5_1 block.
func q5Bits(qs byte, qh uint32, j int) (int32, int32) {
	h0 := int32((qh>>j)<<4) & 0x10
	h1 := int32(qh>>(j+12)) & 0x10
	return int32(qs&0xf) | h0, int32(qs>>4) | h1
}

// DequantizeRowQ5_0 expands q5_0 blocks into y: d·(q-16).
func DequantizeRowQ5_0(src []byte, y []float32) error {
	nb, err := checkBlocks("q5_0", len(y), len(src), QK, BlockQ5_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ5_0Size:], y[i*QK:(i+1)*QK]
		d, qh := getF16(blk), binary.LittleEndian.Uint32(blk[2:])
		for j := 0; j < QK/2; j++ {
			x0, x1 := q5Bits(blk[6+j], qh, j)
			ys[j] = float32(x0-16) * d
			ys[j+QK/2] = float32(x1-16) * d
		}
	}
	return nil
}

// DequantizeRowQ5_1 expands q5_1 blocks into y: d·q + m.
func DequantizeRowQ5_1(src []byte, y []float32) error {
	nb, err := checkBlocks("q5_1", len(y), len(src), QK, BlockQ5_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ5_1Size:], y[i*QK:(i+1)*QK]
		d, m, qh := getF16(blk), getF16(blk[2:]), binary.LittleEndian.Uint32(blk[4:])
		for j := 0; j < QK/2; j++ {
			x0, x1 := q5Bits(blk[8+j], qh, j)
			ys[j] = float32(float32(x0)*d) + m
			ys[j+QK/2] = float32(float32(x1)*d) + m
		}
	}
	return nil
}

// DequantizeRowQ8_1 expands q8_1 blocks into y: d·q (ggml has no
// dequantizer of its own for q8_1; this is the block's meaning).
func DequantizeRowQ8_1(src []byte, y []float32) error {
	nb, err := checkBlocks("q8_1", len(y), len(src), QK, BlockQ8_1Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ8_1Size:], y[i*QK:(i+1)*QK]
		d := getF16(blk)
		for j := range ys {
			ys[j] = float32(int8(blk[4+j])) * d
		}
	}
	return nil
}

// DequantizeRowQ2_K expands q2_K blocks into y.
func DequantizeRowQ2_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q2_K", len(y), len(src), QKK, BlockQ2_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ2_KSize:], y[i*QKK:(i+1)*QKK]
		d, mn := getF16(blk[80:]), getF16(blk[82:])
		is, o := 0, 0
		for n := 0; n < QKK; n += 128 {
			q := blk[16+n/4:]
			for shift := 0; shift < 8; shift += 2 {
				for half := 0; half < 2; half++ {
					sc := blk[is]
					is++
					dl, ml := d*float32(sc&0xf), mn*float32(sc>>4)
					for l := 16 * half; l < 16*half+16; l++ {
						ys[o] = float32(dl*float32((q[l]>>shift)&3)) - ml
						o++
					}
				}
			}
		}
	}
	return nil
}

// DequantizeRowQ3_K expands q3_K blocks into y.
func DequantizeRowQ3_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q3_K", len(y), len(src), QKK, BlockQ3_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ3_KSize:], y[i*QKK:(i+1)*QKK]
		hm, sc := blk[:32], blk[96:108]
		dAll := getF16(blk[108:])
		is, o, m := 0, 0, uint8(1)
		for n := 0; n < QKK; n += 128 {
			q := blk[32+n/4:]
			for shift := 0; shift < 8; shift += 2 {
				for half := 0; half < 2; half++ {
					dl := dAll * float32(Q3KScale(sc, is))
					is++
					for l := 16 * half; l < 16*half+16; l++ {
						v := int32((q[l] >> shift) & 3)
						if hm[l]&m == 0 {
							v -= 4
						}
						ys[o] = dl * float32(v)
						o++
					}
				}
				m <<= 1
			}
		}
	}
	return nil
}

// DequantizeRowQ4_K expands q4_K blocks into y.
func DequantizeRowQ4_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q4_K", len(y), len(src), QKK, BlockQ4_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ4_KSize:], y[i*QKK:(i+1)*QKK]
		d, mn := getF16(blk), getF16(blk[2:])
		for j, is := 0, 0; j < QKK; j, is = j+64, is+2 {
			q := blk[16+j/2:]
			s1, m1 := K4ScaleMin(is, blk[4:])
			s2, m2 := K4ScaleMin(is+1, blk[4:])
			d1, dm1 := d*float32(s1), mn*float32(m1)
			d2, dm2 := d*float32(s2), mn*float32(m2)
			for l := 0; l < 32; l++ {
				ys[j+l] = float32(d1*float32(q[l]&0xf)) - dm1
				ys[j+32+l] = float32(d2*float32(q[l]>>4)) - dm2
			}
		}
	}
	return nil
}

// DequantizeRowQ5_K expands q5_K blocks into y.
func DequantizeRowQ5_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q5_K", len(y), len(src), QKK, BlockQ5_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ5_KSize:], y[i*QKK:(i+1)*QKK]
		d, mn := getF16(blk), getF16(blk[2:])
		qh := blk[16:48]
		u1, u2 := uint8(1), uint8(2)
		for j, is := 0, 0; j < QKK; j, is = j+64, is+2 {
			ql := blk[48+j/2:]
			s1, m1 := K4ScaleMin(is, blk[4:])
			s2, m2 := K4ScaleMin(is+1, blk[4:])
			d1, dm1 := d*float32(s1), mn*float32(m1)
			d2, dm2 := d*float32(s2), mn*float32(m2)
			for l := 0; l < 32; l++ {
				v1, v2 := ql[l]&0xf, ql[l]>>4
				if qh[l]&u1 != 0 {
					v1 += 16
				}
				if qh[l]&u2 != 0 {
					v2 += 16
				}
				ys[j+l] = float32(d1*float32(v1)) - dm1
				ys[j+32+l] = float32(d2*float32(v2)) - dm2
			}
			u1 <<= 2
			u2 <<= 2
		}
	}
	return nil
}

// DequantizeRowQ6_K expands q6_K blocks into y: d·scale·(q-32).
func DequantizeRowQ6_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q6_K", len(y), len(src), QKK, BlockQ6_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ6_KSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk[208:])
		for n := 0; n < QKK; n += 128 {
			ql, qh, sc := blk[n/2:], blk[128+n/4:], blk[192+n/16:]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int32(ql[l]&0xf|((qh[l]>>0)&3)<<4) - 32
				q2 := int32(ql[l+32]&0xf|((qh[l]>>2)&3)<<4) - 32
				q3 := int32(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
				ys[n+l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				ys[n+l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				ys[n+l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				ys[n+l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
	return nil
}

// DequantizeRowQ8_K expands q8_K blocks into y: d·q.
func DequantizeRowQ8_K(src []byte, y []float32) error {
	nb, err := checkBlocks("q8_K", len(y), len(src), QKK, BlockQ8_KSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ8_KSize:], y[i*QKK:(i+1)*QKK]
		d := math.Float32frombits(binary.LittleEndian.Uint32(blk))
		for j := range ys {
			ys[j] = d * float32(int8(blk[4+j]))
		}
	}
	return nil
}

func minMax(xs []float32) (mn, mx float32) {
	mn, mx = math.MaxFloat32, -math.MaxFloat32
	for _, v := range xs {
		mn = cmin(mn, v)
		mx = cmax(mx, v)
	}
	return mn, mx
}

// cmin and cmax are C's `if (v < m) m = v` updates (a NaN v never wins).
func cmin(m, v float32) float32 {
	if v < m {
		return v
	}
	return m
}

func cmax(m, v float32) float32 {
	if v > m {
		return v
	}
	return m
}

func inv(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// truncI8 is C's (int8_t)v for the values the quantizers make:
// truncation toward zero, taken modulo 256 as a signed byte (0 for NaN and
// values beyond int32, as x86's conversion gives).
func truncI8(v float32) int32 { return int32(int8(truncU8(v))) }

// truncU8 is C's (uint8_t)(int8_t)v for the values the quantizers make:
// truncation toward zero, taken modulo 256 (0 for NaN and values beyond
// int32, as x86's conversion gives).
func truncU8(v float32) uint8 {
	if !(v > -2147483648 && v < 2147483648) {
		return 0
	}
	return uint8(int32(v))
}
