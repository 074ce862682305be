//go:build amd64 && !purego

package vec

// The packed q4_0 decode dots (q4p512_amd64.s); the one-row kernel
// ignores stride.

//go:noescape
func dotQ4Px4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ4Px1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

// Q4PackedDots reports whether DotQ4_0RowsPacked runs its AVX-512 kernels
// (the level of QDotsAVX512); elsewhere it runs portable Go, and
// DotQ4_0Rows on the unpacked row is the faster product.
func Q4PackedDots() bool { return useQ512 }

func dotQ4_0RowsPacked(dst []float32, w []byte, stride int, yp []byte, nb int) {
	if useQ512 {
		qRows512(dotQ4Px4AVX512, dotQ4Px1AVX512, dst, w, stride, yp, nb)
		return
	}
	dotQ4_0RowsPackedGo(dst, w, stride, yp, nb)
}

//go:noescape
func q4KDot4WPAVX512(w *byte, stride int, y *byte, nb int, dst *float32)

// Q4KPackedDots reports whether DotQ4_KRowsPacked runs its AVX-512
// kernels on the packed row (the level of the AVX-512 k-quant dots);
// elsewhere it runs DotQ4_KRows on the plain row.
func Q4KPackedDots() bool { return useK512 }

func dotQ4_KRowsPacked(dst []float32, w []byte, stride int, y, yp []byte, nb int) {
	if !useK512 {
		dotQ4_KMat(dst, len(dst), w, stride, len(dst), y, nb*Q8_KBlockSize, 1, nb)
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		q4KDot4WPAVX512(&w[r*stride], stride, &yp[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dst[r] = q4KDot1AVX512(&w[r*stride], &y[0], nb)
	}
}

//go:noescape
func dotQ4Px4IAVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func q4KDot4RAVX512(w *byte, y *byte, nb int, dst *float32)

func dotQ4_0RowsRepacked(dst []float32, w []byte, yp []byte, nb int) {
	rs := nb * Q4_0BlockSize
	if !useQ512 {
		deinterleaveRows(dst, w, rs, 4*Q4_0BlockSize, func(d []float32, plain []byte) {
			dotQ4_0RowsPackedGo(d, plain, rs, yp, nb)
		})
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		dotQ4Px4IAVX512(&w[r*rs], 4*Q4_0BlockSize, &yp[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dotQ4Px1AVX512(&w[r*rs], 0, &yp[0], nb, &dst[r])
	}
}

func dotQ4_KRowsRepacked(dst []float32, w []byte, y []byte, nb int) {
	rs := nb * Q4_KBlockSize
	if !useK512 {
		deinterleaveRows(dst, w, rs, RepackUnit(true, nb), func(d []float32, plain []byte) {
			dotQ4_KMat(d, len(d), plain, rs, len(d), y, nb*Q8_KBlockSize, 1, nb)
		})
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		q4KDot4RAVX512(&w[r*rs], &y[0], nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dst[r] = q4KDot1AVX512(&w[r*rs], &y[0], nb)
	}
}
