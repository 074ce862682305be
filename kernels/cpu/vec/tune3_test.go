//go:build tune && amd64 && !purego

package vec

import (
	"os"
	"testing"
)

func TestTune3(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	n := 4096
	x, y := fill(n, 1), make([]float32, n)
	ns := func(f func()) float64 { return float64(minTime(2000, f).Nanoseconds()) / float64(n) }
	t.Logf("max    %.3f ns/elem", ns(func() { Max(x) }))
	t.Logf("expsub %.3f ns/elem", ns(func() { ExpSub(y, x, 1) }))
	t.Logf("scale  %.3f ns/elem", ns(func() { Scale(y, y, 0.5) }))
	t.Logf("silu   %.3f ns/elem", ns(func() { SiLU(y, x) }))
	t.Logf("sumsq  %.3f ns/elem", ns(func() { SumSq(x) }))
	t.Logf("add    %.3f ns/elem", ns(func() { Add(y, x, x) }))
	t.Logf("copy   %.3f ns/elem", ns(func() { copy(y, x) }))
}
