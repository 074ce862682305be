//go:build !amd64 || purego

package vec

func dotF16Rows(dst []float32, w []byte, stride int, x []float32, k int) {
	dotF16RowsGo(dst, w, stride, x, k)
}

func dotBF16Rows(dst []float32, w []byte, stride int, x []float32, k int) {
	dotBF16RowsGo(dst, w, stride, x, k)
}
