package vec

// RopeNormalRows rotates the adjacent pairs of rows ROPE rows in normal
// mode with one cache: for the r-th row, yr = y[r·ys:] and xr = x[r·xs:],
// yr[i] = xr[i]·cc[i] + xr[i^1]·ss[i] for i < n = len(cc) (even, ss at
// least as long). With cc = (c, c) and ss = (-s, s) for each pair that
// is (x0·c - x1·s, x0·s + x1·c), bit for bit (each product rounded, no
// FMA, at every level). y may be x (then ys = xs).
func RopeNormalRows(y, x []float32, ys, xs, rows int, cc, ss []float32) {
	n := len(cc) &^ 1
	if rows <= 0 || n == 0 {
		return
	}
	y, x, cc, ss = y[:(rows-1)*ys+n], x[:(rows-1)*xs+n], cc[:n], ss[:n]
	ropeNormal(y, x, ys, xs, rows, cc, ss)
}

// RopeNeoXRows rotates the pairs of rows ROPE rows in NeoX mode, h =
// len(cos) elements apart, with one cache: for the r-th row, yr =
// y[r·ys:] and xr = x[r·xs:], yr[i] = xr[i]·cos[i] - xr[h+i]·sin[i] and
// yr[h+i] = xr[i]·sin[i] + xr[h+i]·cos[i] for i < h (each product
// rounded, no FMA, at every level). sin holds at least h values. y may
// be x (then ys = xs).
func RopeNeoXRows(y, x []float32, ys, xs, rows int, cos, sin []float32) {
	h := len(cos)
	if rows <= 0 || h == 0 {
		return
	}
	y, x, sin = y[:(rows-1)*ys+2*h], x[:(rows-1)*xs+2*h], sin[:h]
	ropeNeoX(y, x, ys, xs, rows, cos, sin)
}

// ropeNormalGo is RopeNormalRows from element i on (i even) of each row.
func ropeNormalGo(y, x []float32, ys, xs, rows int, cc, ss []float32, i0 int) {
	for r := range rows {
		yr, xr := y[r*ys:r*ys+len(cc)], x[r*xs:r*xs+len(cc)]
		for i := i0; i+1 < len(xr); i += 2 {
			x0, x1 := xr[i], xr[i+1]
			yr[i] = float32(x0*cc[i]) + float32(x1*ss[i])
			yr[i+1] = float32(x1*cc[i+1]) + float32(x0*ss[i+1])
		}
	}
}

// ropeNeoXGo is RopeNeoXRows from pair i0 on of each row.
func ropeNeoXGo(y, x []float32, ys, xs, rows int, cos, sin []float32, i0 int) {
	h := len(cos)
	sin = sin[:h]
	for r := range rows {
		xa, xb := x[r*xs:r*xs+h], x[r*xs+h:r*xs+2*h]
		ya, yb := y[r*ys:r*ys+h], y[r*ys+h:r*ys+2*h]
		for i := i0; i < h; i++ {
			x0, x1, c, s := xa[i], xb[i], cos[i], sin[i]
			ya[i] = float32(x0*c) - float32(x1*s)
			yb[i] = float32(x0*s) + float32(x1*c)
		}
	}
}
