//go:build tune && amd64 && !purego

package vec

import (
	"os"
	"testing"
	"time"
)

func minTime(reps int, f func()) time.Duration {
	best := time.Hour
	for range reps {
		t := time.Now()
		f()
		best = min(best, time.Since(t))
	}
	return best
}

func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	pk := minTime(20, func() { fmaChunk(1 << 16) })
	peak := float64(1<<16) * 192 / pk.Seconds() / 1e9
	t.Logf("peak 1 core %.1f GFLOP/s", peak)
	for _, s := range []int{256, 512, 1024} {
		x, y, z := fill(s*s, 1), fill(s*s, 2), make([]float32, s*s)
		d := minTime(10, func() { GemmNT(s, s, s, x, s, y, s, z, s) })
		g := 2 * float64(s*s*s) / d.Seconds() / 1e9
		t.Logf("gemm %d: %.1f GFLOP/s = %.2f of peak", s, g, g/peak)
	}
	for _, s := range []int{1024, 2048} {
		ld := s + 16
		x, y, z := fill(s*ld, 1), fill(s*ld, 2), make([]float32, s*s)
		d := minTime(5, func() { GemmNT(s, s, s, x, ld, y, ld, z, s) })
		g := 2 * float64(s*s*s) / d.Seconds() / 1e9
		t.Logf("gemm %d lda=%d: %.1f GFLOP/s = %.2f of peak", s, ld, g, g/peak)
	}
	for _, sh := range [][3]int{{1, 2048, 2048}, {2, 2048, 2048}, {3, 2048, 2048}, {4, 2048, 2048}, {8, 2048, 2048}, {1, 512, 512}, {4, 512, 512}} {
		m, n, k := sh[0], sh[1], sh[2]
		x, y, z := fill(m*k, 1), fill(n*k, 2), make([]float32, m*n)
		d := minTime(10, func() { GemmNT(m, n, k, x, k, y, k, z, n) })
		g := 2 * float64(m*n*k) / d.Seconds() / 1e9
		t.Logf("gemm %v: %.1f GFLOP/s, %.1f GB/s of b", sh, g, float64(4*n*k)/d.Seconds()/1e9)
	}
	s := 1024
	y, z := fill(s*s, 2), make([]float32, s*s)
	d := minTime(10, func() { packB(z, y, s, s, 256) })
	t.Logf("packB 1024x256: %v = %.2f GB/s", d, float64(s*256*8)/d.Seconds()/1e9)
}
