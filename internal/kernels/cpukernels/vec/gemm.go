package vec

import (
	"errors"
	"fmt"
	"sync"
)

// ErrShape is wrapped by the errors of the matrix kernels when sizes,
// leading dimensions and slice lengths do not fit together.
var ErrShape = errors.New("vec: bad matrix shape")

// checkGemm validates the arguments of the GemmNT family.
func checkGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	switch {
	case m < 0 || n < 0 || k < 0:
		return fmt.Errorf("%w: negative size m=%d n=%d k=%d", ErrShape, m, n, k)
	case m > 0 && k > 0 && lda < k:
		return fmt.Errorf("%w: lda=%d < k=%d", ErrShape, lda, k)
	case n > 0 && k > 0 && ldb < k:
		return fmt.Errorf("%w: ldb=%d < k=%d", ErrShape, ldb, k)
	case m > 0 && n > 0 && ldc < n:
		return fmt.Errorf("%w: ldc=%d < n=%d", ErrShape, ldc, n)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k > 0 {
		if need := (m-1)*lda + k; len(a) < need {
			return fmt.Errorf("%w: len(a)=%d < %d for m=%d lda=%d k=%d", ErrShape, len(a), need, m, lda, k)
		}
		if need := (n-1)*ldb + k; len(b) < need {
			return fmt.Errorf("%w: len(b)=%d < %d for n=%d ldb=%d k=%d", ErrShape, len(b), need, n, ldb, k)
		}
	}
	if need := (m-1)*ldc + n; len(c) < need {
		return fmt.Errorf("%w: len(c)=%d < %d for m=%d ldc=%d n=%d", ErrShape, len(c), need, m, ldc, n)
	}
	return nil
}

// GemmNT sets c[i*ldc+j] = sum over p < k of a[i*lda+p] * b[j*ldb+p] for
// i < m, j < n: C = A·Bᵀ with both operands K-contiguous. This is ggml's
// mul_mat with a = src1 rows (activations) and b = src0 rows (weights).
// Elements of c outside the m×n block are not touched. c must not overlap
// a or b. Bad sizes give an error wrapping ErrShape and touch nothing.
//
// GemmNT runs on the calling goroutine. To split one product across
// workers, call GemmNTPart with each worker's index, or GemmNTParallel.
func GemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	return GemmNTBuf(nil, m, n, k, a, lda, b, ldb, c, ldc)
}

// GemmNTPart computes part ith (0 ≤ ith < nth) of GemmNT's result: the
// nth parts are disjoint blocks of c that together cover the m×n block, so
// nth workers that each call GemmNTPart with their own ith (and the same
// other arguments) compute the whole product without locks. The split
// follows the columns of c (rows of b, in multiples of the micro-tile) when
// n is large enough, and the rows of c otherwise; a part may be empty.
func GemmNTPart(ith, nth, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	return GemmNTPartBuf(nil, ith, nth, m, n, k, a, lda, b, ldb, c, ldc)
}

// GemmBuf is the packing memory of the GEMM kernels, kept by one goroutine
// across products so that they allocate nothing (a decoder's attention runs
// two small products per head and layer, each of which allocated its
// packed block of b). The zero value is ready; a GemmBuf must not be used
// by two products at once. Every element the kernels read from it is
// written first in the same product, so results do not depend on it.
type GemmBuf struct {
	bp, edge, ct []float32
}

// slot returns n floats of *s, grown as needed (contents stale).
func (g *GemmBuf) slot(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}

// GemmNTPartBuf is GemmNTPart with its packing memory taken from buf (nil:
// allocated for the call). The results are GemmNTPart's, bit for bit.
func GemmNTPartBuf(buf *GemmBuf, ith, nth, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if nth < 1 || ith < 0 || ith >= nth {
		return fmt.Errorf("%w: part %d of %d", ErrShape, ith, nth)
	}
	if err := checkGemm(m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	i0, i1, j0, j1 := GemmNTSplit(ith, nth, m, n)
	if i0 >= i1 || j0 >= j1 {
		return nil
	}
	var ap, bp []float32
	if k > 0 {
		ap, bp = a[i0*lda:], b[j0*ldb:]
	}
	gemmNT(buf, i1-i0, j1-j0, k, ap, lda, bp, ldb, c[i0*ldc+j0:], ldc)
	return nil
}

// GemmNTBuf is GemmNT with its packing memory taken from buf (nil:
// allocated for the call), bit for bit GemmNT's results.
func GemmNTBuf(buf *GemmBuf, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if err := checkGemm(m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	gemmNT(buf, m, n, k, a, lda, b, ldb, c, ldc)
	return nil
}

// GemmNTSplit returns the block of c, rows [i0,i1) and columns [j0,j1),
// that GemmNTPart computes for part ith of nth.
func GemmNTSplit(ith, nth, m, n int) (i0, i1, j0, j1 int) {
	if nth <= 1 {
		return 0, m, 0, n
	}
	const colUnit = gemmNR
	if n >= nth*colUnit*2 || n >= m {
		// Columns: whole micro-tiles per part, so parts never share a
		// cache line of c (when ldc is a multiple of 16) and each part
		// packs only its own rows of b.
		units := (n + colUnit - 1) / colUnit
		u0, u1 := units*ith/nth, units*(ith+1)/nth
		j0, j1 = min(u0*colUnit, n), min(u1*colUnit, n)
		return 0, m, j0, j1
	}
	const rowUnit = gemmMR
	units := (m + rowUnit - 1) / rowUnit
	u0, u1 := units*ith/nth, units*(ith+1)/nth
	i0, i1 = min(u0*rowUnit, m), min(u1*rowUnit, m)
	return i0, i1, 0, n
}

// GemmNTParallel is GemmNT split across workers goroutines (GemmNTPart);
// workers < 1 means 1. It returns when all parts are done.
func GemmNTParallel(workers, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if err := checkGemm(m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	if workers <= 1 {
		gemmNT(nil, m, n, k, a, lda, b, ldb, c, ldc)
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = GemmNTPart(w, workers, m, n, k, a, lda, b, ldb, c, ldc)
		}(w)
	}
	errs[0] = GemmNTPart(0, workers, m, n, k, a, lda, b, ldb, c, ldc)
	wg.Wait()
	return errors.Join(errs...)
}

// gemmNTGo is the portable product: 2×2 register tiles of dot products,
// with b blocked so that a block of its rows stays in cache across the
// rows of a.
func gemmNTGo(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	jBlock := max(2, (128<<10)/(4*k)) &^ 1
	for jb := 0; jb < n; jb += jBlock {
		je := min(jb+jBlock, n)
		i := 0
		for ; i+2 <= m; i += 2 {
			a0 := a[i*lda : i*lda+k]
			a1 := a[(i+1)*lda : (i+1)*lda+k]
			c0 := c[i*ldc : i*ldc+n]
			c1 := c[(i+1)*ldc : (i+1)*ldc+n]
			j := jb
			for ; j+2 <= je; j += 2 {
				b0 := b[j*ldb : j*ldb+k]
				b1 := b[(j+1)*ldb : (j+1)*ldb+k]
				var s00, s01, s10, s11 float32
				for p, x0 := range a0 {
					x1 := a1[p]
					y0, y1 := b0[p], b1[p]
					s00 += x0 * y0
					s01 += x0 * y1
					s10 += x1 * y0
					s11 += x1 * y1
				}
				c0[j], c0[j+1] = s00, s01
				c1[j], c1[j+1] = s10, s11
			}
			for ; j < je; j++ {
				bj := b[j*ldb : j*ldb+k]
				c0[j] = dotGo(a0, bj)
				c1[j] = dotGo(a1, bj)
			}
		}
		for ; i < m; i++ {
			ai := a[i*lda : i*lda+k]
			for j := jb; j < je; j++ {
				c[i*ldc+j] = dotGo(ai, b[j*ldb:j*ldb+k])
			}
		}
	}
}
