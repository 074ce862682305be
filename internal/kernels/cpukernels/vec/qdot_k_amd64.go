//go:build amd64 && !purego

package vec

// The AVX2 row kernels: the dot of one weight row w (nb ≥ 1 super-blocks)
// with one q8_K row y, with the float steps of the Go kernels.

//go:noescape
func q4KRowAVX2(w *byte, y *byte, nb int) float32

//go:noescape
func q5KRowAVX2(w *byte, y *byte, nb int) float32

//go:noescape
func q6KRowAVX2(w *byte, y *byte, nb int) float32

// lowKSIMD reports whether the q2_K and q3_K dots run SIMD kernels
// (AVX-512 tiles, or the AVX2 row kernels of qdot2_amd64.s).
func lowKSIMD() bool { return useK512 || useQAVX2 }

// lowKTiles reports whether they are the AVX-512 tiles.
func lowKTiles() bool { return useK512 }

func dotQ2_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q2K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	if useQAVX2 {
		matGo(dotQ2_KAVX2, dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ2_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ3_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	if useK512 {
		q3K512.mat(dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	if useQAVX2 {
		matGo(dotQ3_KAVX2, dst, ldd, w, stride, nw, y, ys, ny, nb)
		return
	}
	matGo(dotQ3_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ5_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ5_K512(w, y, nb)
	}
	if !useQAVX2 {
		return dotQ5_K(w, y, nb)
	}
	return dotQ5_KAVX2(w, y, nb)
}

func dotQ4_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ4_K512(w, y, nb)
	}
	if !useQAVX2 {
		return dotQ4_K(w, y, nb)
	}
	return dotQ4_KAVX2(w, y, nb)
}

func dotQ6_KBest(w, y []byte, nb int) float32 {
	if useK512 {
		return dotQ6_K512(w, y, nb)
	}
	if !useQAVX2 {
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

func dotQ4_KAVX2(w, y []byte, nb int) float32 { return q4KRowAVX2(&w[0], &y[0], nb) }

func dotQ5_KAVX2(w, y []byte, nb int) float32 { return q5KRowAVX2(&w[0], &y[0], nb) }

func dotQ6_KAVX2(w, y []byte, nb int) float32 { return q6KRowAVX2(&w[0], &y[0], nb) }
