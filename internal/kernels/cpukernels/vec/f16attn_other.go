//go:build !amd64 || purego

package vec

func dotF16Group(dst []float32, dstride int, k []byte, kstride, rows int, q []float32, qstride, heads, n int) {
	dotF16GroupGo(dst, dstride, k, kstride, rows, q, qstride, heads, n)
}

func madF16Group(o []float32, ostride int, v []byte, vstride, rows int, w []float32, wstride, heads, n int) {
	madF16Go(o, ostride, v, vstride, rows, w, wstride, heads, 0, n)
}
