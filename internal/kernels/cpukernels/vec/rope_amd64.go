//go:build amd64 && !purego

package vec

// The rotation kernels of rope_amd64.s (asmgen/rope.go).

//go:noescape
func ropeNormalAVX2(y, x, cos, sin *float32, n, rows, ys, xs int)

//go:noescape
func ropeNormalAVX512(y, x, cos, sin *float32, n, rows, ys, xs int)

//go:noescape
func ropeNeoXAVX2(y, x, cos, sin *float32, h, n, rows, ys, xs int)

//go:noescape
func ropeNeoXAVX512(y, x, cos, sin *float32, h, n, rows, ys, xs int)

// ropeNormal runs the level's kernel over the whole vectors of each row,
// then ropeNormalGo over the rest.
func ropeNormal(y, x []float32, ys, xs, rows int, cc, ss []float32) {
	i := 0
	switch n := len(cc); {
	case useAVX512 && n >= 16:
		i = n &^ 15
		ropeNormalAVX512(p(y), p(x), p(cc), p(ss), i, rows, ys, xs)
	case useAVX2 && n >= 8:
		i = n &^ 7
		ropeNormalAVX2(p(y), p(x), p(cc), p(ss), i, rows, ys, xs)
	}
	if i < len(cc) {
		ropeNormalGo(y, x, ys, xs, rows, cc, ss, i)
	}
}

// ropeNeoX is ropeNormal for NeoX pairs.
func ropeNeoX(y, x []float32, ys, xs, rows int, cos, sin []float32) {
	i := 0
	switch h := len(cos); {
	case useAVX512 && h >= 16:
		i = h &^ 15
		ropeNeoXAVX512(p(y), p(x), p(cos), p(sin), h, i, rows, ys, xs)
	case useAVX2 && h >= 8:
		i = h &^ 7
		ropeNeoXAVX2(p(y), p(x), p(cos), p(sin), h, i, rows, ys, xs)
	}
	if i < len(cos) {
		ropeNeoXGo(y, x, ys, xs, rows, cos, sin, i)
	}
}
