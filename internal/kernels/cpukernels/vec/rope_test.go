package vec

import (
	"math"
	"testing"
)

// ropeRowsCase checks a Rows kernel on 3 rows of n elements: want(xr,
// wr) writes the expected rotation of row xr into wr; run rotates rows
// ys and xs apart. The rows are rotated into a new array (strides n+5
// and n+3) and in place (stride n+3), and every bit must match.
func ropeRowsCase(t *testing.T, name string, n int, want func(xr, wr []float32), run func(y, x []float32, ys, xs, rows int)) {
	t.Helper()
	const rows = 3
	xs := n + 3
	x := make([]float32, rows*xs)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.731+float64(n))) * 3
	}
	for _, inPlace := range []bool{false, true} {
		ys, y := n+5, make([]float32, rows*(n+5))
		if inPlace {
			ys, y = xs, append([]float32(nil), x...)
		}
		src := x
		if inPlace {
			src = y
		}
		run(y, src, ys, xs, rows)
		w := make([]float32, n)
		for r := range rows {
			want(x[r*xs:r*xs+n], w)
			for i := range w {
				if got := y[r*ys+i]; math.Float32bits(got) != math.Float32bits(w[i]) {
					t.Fatalf("%s n %d in place %v: row %d [%d] = %g, want %g", name, n, inPlace, r, i, got, w[i])
				}
			}
		}
	}
}

// ropeAngles returns m cosines and sines.
func ropeAngles(m int) (c, s []float32) {
	c, s = make([]float32, m), make([]float32, m)
	for i := range m {
		a := float64(i)*0.377 + 0.1
		c[i], s[i] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	return c, s
}

// TestRopeRows checks RopeNormalRows and RopeNeoXRows against the scalar
// rotation (x0·c - x1·s, x0·s + x1·c) for rows with and without a tail
// past the SIMD level's vectors, into new rows and in place.
func TestRopeRows(t *testing.T) {
	for _, n := range []int{2, 6, 8, 16, 18, 34, 64, 96, 128, 130} {
		c, s := ropeAngles(n / 2)
		cc, ss := make([]float32, n), make([]float32, n)
		for k := range c {
			cc[2*k], cc[2*k+1], ss[2*k], ss[2*k+1] = c[k], c[k], -s[k], s[k]
		}
		ropeRowsCase(t, "normal", n, func(xr, wr []float32) {
			for k := range c {
				x0, x1 := xr[2*k], xr[2*k+1]
				wr[2*k] = float32(x0*c[k]) - float32(x1*s[k])
				wr[2*k+1] = float32(x0*s[k]) + float32(x1*c[k])
			}
		}, func(y, x []float32, ys, xs, rows int) { RopeNormalRows(y, x, ys, xs, rows, cc, ss) })
		h := n/2 + 1 // NeoX: odd half rows too
		c, s = ropeAngles(h)
		ropeRowsCase(t, "neox", 2*h, func(xr, wr []float32) {
			for k := range h {
				x0, x1 := xr[k], xr[h+k]
				wr[k] = float32(x0*c[k]) - float32(x1*s[k])
				wr[h+k] = float32(x0*s[k]) + float32(x1*c[k])
			}
		}, func(y, x []float32, ys, xs, rows int) { RopeNeoXRows(y, x, ys, xs, rows, c, s) })
	}
}
