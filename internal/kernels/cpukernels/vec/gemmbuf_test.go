package vec

import (
	"math"
	"slices"
	"testing"
)

// TestGemmBufSameBits runs products of several shapes (dot, swapped and
// packed paths, edge rows and columns, k above one block) through
// GemmNTPartBuf and GemmNTBuf with one GemmBuf reused across them, its
// memory dirtied between products, and requires GemmNTPart's and GemmNT's
// bits.
func TestGemmBufSameBits(t *testing.T) {
	var buf GemmBuf
	for _, s := range []struct{ m, n, k, nth int }{
		{128, 128, 128, 2}, {128, 64, 128, 1}, {7, 40, 33, 1}, {20, 100, 64, 2},
		{50, 17, 300, 3}, {131, 70, 257, 2}, {16, 16, 1, 1}, {96, 1030, 40, 2},
		{32, 100, 50, 1}, {28, 90, 70, 2}, {44, 200, 260, 1},
	} {
		lda, ldb, ldc := s.k+3, s.k+1, s.n+5
		a := make([]float32, s.m*lda)
		b := make([]float32, s.n*ldb)
		for i := range a {
			a[i] = float32(math.Sin(float64(i) * 0.37))
		}
		for i := range b {
			b[i] = float32(math.Cos(float64(i)*0.11)) * 0.5
		}
		want := make([]float32, s.m*ldc)
		got := make([]float32, s.m*ldc)
		for ith := range s.nth {
			if err := GemmNTPart(ith, s.nth, s.m, s.n, s.k, a, lda, b, ldb, want, ldc); err != nil {
				t.Fatal(err)
			}
			for _, f := range [][]float32{buf.bp[:cap(buf.bp)], buf.edge[:cap(buf.edge)], buf.ct[:cap(buf.ct)]} {
				for i := range f {
					f[i] = float32(math.NaN())
				}
			}
			if err := GemmNTPartBuf(&buf, ith, s.nth, s.m, s.n, s.k, a, lda, b, ldb, got, ldc); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.EqualFunc(got, want, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			t.Errorf("%+v: GemmNTPartBuf differs from GemmNTPart", s)
		}
		if err := GemmNT(s.m, s.n, s.k, a, lda, b, ldb, want, ldc); err != nil {
			t.Fatal(err)
		}
		if err := GemmNTBuf(&buf, s.m, s.n, s.k, a, lda, b, ldb, got, ldc); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			t.Errorf("%+v: GemmNTBuf differs from GemmNT", s)
		}
	}
	if err := GemmNTPartBuf(&buf, 2, 2, 4, 4, 4, nil, 4, nil, 4, nil, 4); err == nil {
		t.Error("part 2 of 2: no error")
	}
}
