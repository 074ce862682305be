//go:build tune && amd64 && !purego

package vec

import (
	"os"
	"testing"
)

func TestTune2(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	n, k := 2048, 2048
	for _, m := range []int{8, 12, 16, 24, 32, 48, 64, 96} {
		x, y, z := fill(m*k, 1), fill(n*k, 2), make([]float32, m*n)
		d1 := minTime(8, func() { gemmNTDot(m, n, k, x, k, y, k, z, n) })
		d2 := minTime(8, func() { gemmNTPacked(m, n, k, x, k, y, k, z, n) })
		d3 := minTime(8, func() { gemmNTSwapped(m, n, k, x, k, y, k, z, n) })
		f := 2 * float64(m*n*k) / 1e9
		t.Logf("m=%d dot %.1f packed %.1f swapped %.1f GFLOP/s", m, f/d1.Seconds(), f/d2.Seconds(), f/d3.Seconds())
	}
}
