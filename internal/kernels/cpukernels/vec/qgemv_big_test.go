//go:build unix

package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkGEMVBig runs the q8_0 decode row dots of one activation row
// against a 4096×32768 weight matrix (142 MB, larger than the cache: the
// "larger than the cache" decode row of docs/performance.md) on one and
// two goroutines, alternating with a float32 sum over the same bytes (the
// read bandwidth of one sequential stream), and reports each one's
// fastest run as GB/s: on a shared machine the best of alternating runs
// compares them. The weights are mapped as the CPU backend's default
// buffer maps them (anonymous, no huge-page advice), so the TLB behaves
// as in a product's.
func BenchmarkGEMVBig(b *testing.B) {
	const k, n = 4096, 32768
	nb := k / QK
	rs := nb * Q8_0BlockSize
	m, err := unix.Mmap(-1, 0, n*rs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = unix.Munmap(m) }()
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 64 {
		row, _ := randQ8Row(r, nb)
		copy(m[i*rs:], row)
	}
	for i := 64; i < n; i++ {
		copy(m[i*rs:(i+1)*rs], m[(i%64)*rs:])
	}
	y, _ := randQ8Row(r, nb)
	dst := make([]float32, n)
	f := unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), len(m)/4)
	run := func(sum bool, r0, r1 int) {
		if sum {
			_ = Sum64(f[r0*rs/4 : r1*rs/4])
		} else {
			_ = DotQ8_0Rows(dst[r0:r1], m[r0*rs:], rs, y, nb)
		}
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", th), func(b *testing.B) {
			best := bestAlternating(b, th, n, run)
			b.ReportMetric(float64(len(m))/best[0].Seconds()/1e9, "q8_0-GB/s")
			b.ReportMetric(float64(len(m))/best[1].Seconds()/1e9, "read-GB/s")
		})
	}
}
