//go:build amd64 && !purego

package vec

import cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"

// q4KBlockAVX2 returns Σ_g sc[g]·Σ q4·q8 over the 8 groups of 32 of one
// q4_K super-block: q4 its 128 nibble bytes, q8 the 256 q8_K quants.
//
//go:noescape
func q4KBlockAVX2(q4 *byte, q8 *byte, sc *int16) int32

// q6KBlockAVX2 returns Σ_g sc[g]·Σ u·q8 over the 16 groups of 16 of one
// q6_K super-block, u the unsigned 6-bit quants (q+32) from ql (128 bytes)
// and qh (64 bytes).
//
//go:noescape
func q6KBlockAVX2(ql *byte, qh *byte, q8 *byte, sc *int16) int32

// q5KBlockAVX2 is q4KBlockAVX2 for a q5_K super-block: qs its 128 nibble
// bytes, qh its 32 bytes of fifth bits.
//
//go:noescape
func q5KBlockAVX2(qs *byte, qh *byte, q8 *byte, sc *int16) int32

func dotQ2_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ2_K512(w, y, nb)
	}
	return dotQ2_K(w, y, nb)
}

func dotQ3_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ3_K512(w, y, nb)
	}
	return dotQ3_K(w, y, nb)
}

// lowKSIMD reports whether the q2_K and q3_K dots run SIMD kernels.
func lowKSIMD() bool { return useK512 }

func dotQ2_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q2K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ2_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ3_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q3K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ3_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ5_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ5_K512(w, y, nb)
	}
	if !useAVX2 {
		return dotQ5_K(w, y, nb)
	}
	return dotQ4_5KAVX2(w, y, nb, Q5_KBlockSize)
}

func dotQ4_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ4_K512(w, y, nb)
	}
	if !useAVX2 {
		return dotQ4_K(w, y, nb)
	}
	return dotQ4_KAVX2(w, y, nb)
}

func dotQ6_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ6_K512(w, y, nb)
	}
	if !useAVX2 {
		return dotQ6_K(w, y, nb)
	}
	return dotQ6_KAVX2(w, y, nb)
}

func dotQ4_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q4K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ4_KBest, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ5_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q5K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ5_KBest, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ6_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q6K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ6_KBest, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ4_KAVX2(w, y []byte, nb int) float32 { return dotQ4_5KAVX2(w, y, nb, Q4_KBlockSize) }

// dotQ4_5KAVX2 is the q4_K (bs = Q4_KBlockSize) or q5_K (Q5_KBlockSize)
// dot on the AVX2 super-block kernels.
func dotQ4_5KAVX2(w, y []byte, nb, bs int) float32 {
	var sum float32
	var sc [8]int16
	for i := 0; i < nb; i++ {
		bw := w[i*bs : (i+1)*bs]
		dy, q8, bsums := q8K(y[i*Q8_KBlockSize : (i+1)*Q8_KBlockSize])
		var summs int32
		for g := 0; g < 8; g++ {
			s, m := cpukernels.K4ScaleMin(g, bw[4:16])
			sc[g] = int16(s)
			summs += (bsum(bsums, 2*g) + bsum(bsums, 2*g+1)) * int32(m)
		}
		var isum int32
		if bs == Q4_KBlockSize {
			isum = q4KBlockAVX2(&bw[16], &q8[0], &sc[0])
		} else {
			isum = q5KBlockAVX2(&bw[48], &bw[16], &q8[0], &sc[0])
		}
		sum += k4Combine(bw, dy, isum, summs)
	}
	return sum
}

func dotQ6_KAVX2(w, y []byte, nb int) float32 {
	var sum float32
	var sc [16]int16
	for i := 0; i < nb; i++ {
		bw := w[i*Q6_KBlockSize : (i+1)*Q6_KBlockSize]
		dy, q8, bs := q8K(y[i*Q8_KBlockSize : (i+1)*Q8_KBlockSize])
		var corr int32
		for g := 0; g < 16; g++ {
			s := int16(int8(bw[192+g]))
			sc[g] = s
			corr += int32(s) * bsum(bs, g)
		}
		isum := q6KBlockAVX2(&bw[0], &bw[128], &q8[0], &sc[0]) - 32*corr
		sum += float32(float32(f16(bw[208:])*dy) * float32(isum))
	}
	return sum
}
