//go:build !amd64 || purego

package vec

func ropeNormal(y, x []float32, ys, xs, rows int, cc, ss []float32) {
	ropeNormalGo(y, x, ys, xs, rows, cc, ss, 0)
}

func ropeNeoX(y, x []float32, ys, xs, rows int, cos, sin []float32) {
	ropeNeoXGo(y, x, ys, xs, rows, cos, sin, 0)
}
