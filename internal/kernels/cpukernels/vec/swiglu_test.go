package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSwiGLU checks the fused kernel against SiLU then Mul, bit for bit
// (the same operations in the same order at every level), over lengths
// around the 64-element step and the chunk, in place too, with inputs
// from large negative (exp overflow) to large positive, and a NaN.
func TestSwiGLU(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 7, 31, 32, 33, 63, 64, 65, 100, 257, 4096, 4099} {
		x, g := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 30)
			g[i] = float32(r.NormFloat64())
		}
		x[0] = float32(math.NaN())
		want := make([]float32, n)
		SiLU(want, x)
		Mul(want, want, g)
		got := make([]float32, n+1)
		got[n] = 42
		SwiGLU(got[:n], x, g)
		if got[n] != 42 {
			t.Fatalf("n %d: wrote past dst", n)
		}
		inplace := append([]float32(nil), g...)
		SwiGLU(inplace, x, inplace)
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(inplace[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: [%d] = %v (in place %v), want %v (x %v, g %v)", n, i, got[i], inplace[i], want[i], x[i], g[i])
			}
		}
	}
}

// TestSwiGLURows checks SwiGLURows against SwiGLU row by row, bit for bit
// (one call for the rows or one per row must not change them), in place
// too, leaving a partial last row and what follows untouched.
func TestSwiGLURows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct{ n, rows int }{
		{1, 5}, {7, 3}, {8, 3}, {12, 4}, {24, 3}, {63, 2}, {64, 3}, {100, 3}, {200, 9}, {4096, 2},
	} {
		m := tc.n * tc.rows
		x, g := make([]float32, m+tc.n-1), make([]float32, m+tc.n-1) // a partial row
		for i := range x {
			x[i] = float32(r.NormFloat64() * 30)
			g[i] = float32(r.NormFloat64())
		}
		want := make([]float32, m)
		for i := 0; i < m; i += tc.n {
			SwiGLU(want[i:i+tc.n], x[i:i+tc.n], g[i:i+tc.n])
		}
		for _, f := range []struct {
			name string
			rows func(dst, x, g []float32, n int)
		}{{"SwiGLURows", SwiGLURows}, {"SwiGLURowsStream", SwiGLURowsStream}} {
			got := make([]float32, len(x)+1)
			for i := m; i < len(got); i++ {
				got[i] = 42
			}
			f.rows(got, x, g, tc.n)
			inplace := append([]float32(nil), x...)
			f.rows(inplace, inplace, g, tc.n)
			for i := range x {
				w, wi := float32(42), x[i]
				if i < m {
					w, wi = want[i], want[i]
				}
				if math.Float32bits(got[i]) != math.Float32bits(w) || math.Float32bits(inplace[i]) != math.Float32bits(wi) {
					t.Fatalf("%s n %d rows %d: [%d] = %v (in place %v), want %v (%v)", f.name, tc.n, tc.rows, i, got[i], inplace[i], w, wi)
				}
			}
		}
	}
}

// TestSwiGLUSweep checks SwiGLU and SwiGLURowsStream (one row) against
// SiLU then Mul, bit for bit, on
// one float32 in 4099 of every sign and exponent (NaNs, infinities,
// subnormals, exp's overflow and underflow boundaries and its subnormal
// results included), with gates of 1 and of -3.
func TestSwiGLUSweep(t *testing.T) {
	const step = 4099
	x := make([]float32, 0, 1<<32/step+1)
	for b := uint64(0); b < 1<<32; b += step {
		x = append(x, math.Float32frombits(uint32(b)))
	}
	for _, gv := range []float32{1, -3} {
		g := make([]float32, len(x))
		for i := range g {
			g[i] = gv
		}
		want, got := make([]float32, len(x)), make([]float32, len(x))
		SiLU(want, x)
		Mul(want, want, g)
		for _, stream := range []bool{false, true} {
			if stream {
				SwiGLURowsStream(got, x, g, len(x))
			} else {
				SwiGLU(got, x, g)
			}
			for i := range x {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("stream %v: x %v (%#x), gate %v: got %v (%#x), want %v (%#x)", stream, x[i], math.Float32bits(x[i]), gv,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// BenchmarkSwiGLU times SwiGLU over rows that stay in the L2 cache (16K
// elements: 192 KB of operands) and over benchvsggml's swiglu shape (4096×512,
// 24 MB), reporting the process's CPU time per element (cpu-ns/elem), the
// figure to compare on a shared machine, next to the wall time.
func BenchmarkSwiGLU(b *testing.B) {
	for _, n := range []int{1 << 14, 4096 * 512} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, g, dst := fill(n, 1), fill(n, 2), make([]float32, n)
			SwiGLU(dst, x, g)
			c0 := cpuSeconds()
			for b.Loop() {
				SwiGLU(dst, x, g)
			}
			b.ReportMetric((cpuSeconds()-c0)/float64(b.N)/float64(n)*1e9, "cpu-ns/elem")
		})
	}
}
