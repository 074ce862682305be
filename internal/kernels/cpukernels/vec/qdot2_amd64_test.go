//go:build amd64 && !purego

package vec

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkQDot2 runs the q5_0, q4_1 and q5_1 row dots of one activation
// row against a 1024×4096 weight matrix with each implementation this CPU
// has, in the same run on the same data: the portable Go dots (what the
// AVX2 level ran before qdot2_amd64.s), the AVX2 kernels and, where the CPU
// has them, the AVX-512 ones. Compare GB/s (weight bytes) across them.
func BenchmarkQDot2(b *testing.B) {
	const k, rows = 4096, 1024
	r := rand.New(rand.NewPCG(5, 6))
	nb := k / QK
	for _, c := range []struct {
		name     string
		wbs, ybs int
		goRows   func([]float32, []byte, int, []byte, int)
		x4a, x1a func(*byte, int, *byte, int, *float32)
		x4b, x1b func(*byte, int, *byte, int, *float32)
		halves   []int
		yHalves  []int
	}{
		{"q5_0", Q5_0BlockSize, Q8_0BlockSize, dotQ5_0RowsGo, dotQ5x4AVX2, dotQ5x1AVX2, dotQ5x4AVX512, dotQ5x1AVX512, []int{0}, []int{0}},
		{"q4_1", Q4_1BlockSize, Q8_1BlockSize, dotQ4_1RowsGo, dotQ41x4AVX2, dotQ41x1AVX2, dotQ41x4AVX512, dotQ41x1AVX512, []int{0, 2}, []int{0, 2}},
		{"q5_1", Q5_1BlockSize, Q8_1BlockSize, dotQ5_1RowsGo, dotQ51x4AVX2, dotQ51x1AVX2, dotQ51x4AVX512, dotQ51x1AVX512, []int{0, 2}, []int{0, 2}},
	} {
		w := randBlocks(r, rows*nb, c.wbs, c.halves)
		y := randBlocks(r, nb, c.ybs, c.yHalves)
		stride := nb * c.wbs
		dst := make([]float32, rows)
		impls := []struct {
			name string
			run  func()
		}{{"go", func() { c.goRows(dst, w, stride, y, nb) }}}
		if useQAVX2 {
			impls = append(impls, struct {
				name string
				run  func()
			}{"avx2", func() { qRows512(c.x4a, c.x1a, dst, w, stride, y, nb) }})
		}
		if useQ512 {
			impls = append(impls, struct {
				name string
				run  func()
			}{"avx512", func() { qRows512(c.x4b, c.x1b, dst, w, stride, y, nb) }})
		}
		for _, im := range impls {
			b.Run(c.name+"/"+im.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					im.run()
				}
			})
		}
	}
}

// BenchmarkKLow is BenchmarkQDot2 for q2_K and q3_K weights (1024×4096)
// against one q8_K row: the Go dots, the AVX2 row kernels and, where the
// CPU has them, the AVX-512 tiles.
func BenchmarkKLow(b *testing.B) {
	const k, rows = 4096, 1024
	r := rand.New(rand.NewPCG(7, 8))
	nb := k / QKK
	y := randQ8K(r, nb)
	dst := make([]float32, rows)
	for _, c := range []struct {
		name    string
		bs, d0  int
		goDot   func([]byte, []byte, int) float32
		avx2Dot func([]byte, []byte, int) float32
		avx512  func() func(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int)
	}{
		{"q2_K", Q2_KBlockSize, 80, dotQ2_K, dotQ2_KAVX2, func() func([]float32, int, []byte, int, int, []byte, int, int, int) { return q2K512.mat }},
		{"q3_K", Q3_KBlockSize, 108, dotQ3_K, dotQ3_KAVX2, func() func([]float32, int, []byte, int, int, []byte, int, int, int) { return q3K512.mat }},
	} {
		w := randKW(r, rows*nb, c.bs, c.d0)
		stride := nb * c.bs
		impls := []struct {
			name string
			mat  func([]float32, int, []byte, int, int, []byte, int, int, int)
		}{{"go", func(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
			matGo(c.goDot, dst, ldd, w, stride, nw, y, ys, ny, nb)
		}}}
		if useQAVX2 {
			impls = append(impls, struct {
				name string
				mat  func([]float32, int, []byte, int, int, []byte, int, int, int)
			}{"avx2", func(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
				matGo(c.avx2Dot, dst, ldd, w, stride, nw, y, ys, ny, nb)
			}})
		}
		if useK512 {
			impls = append(impls, struct {
				name string
				mat  func([]float32, int, []byte, int, int, []byte, int, int, int)
			}{"avx512", c.avx512()})
		}
		for _, im := range impls {
			b.Run(c.name+"/"+im.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					im.mat(dst, rows, w, stride, rows, y, nb*Q8_KBlockSize, 1, nb)
				}
			})
		}
	}
}

// randBlocks returns n random blocks of bs bytes whose halves at the
// offsets hs are scales in [2^-8, 2^-7) (no Inf or NaN).
func randBlocks(r *rand.Rand, n, bs int, hs []int) []byte {
	p := make([]byte, n*bs)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	for i := range n {
		for _, h := range hs {
			v := 0x1c00 | uint16(r.IntN(0x400)) // exponent 7: 2^-8·(1+f)
			p[i*bs+h], p[i*bs+h+1] = byte(v), byte(v>>8)
		}
	}
	return p
}
