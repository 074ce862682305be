package vec

import (
	"math"
	"sync"
	"time"
)

// PeakGFLOPS measures the float32 multiply-add peak of this machine: each of
// workers goroutines (at least 1) runs short chunks of a loop of
// independent register-only FMAs (the widest the kernels use) for about
// dur, all at once, and the sum over workers of each one's fastest chunk
// is returned in GFLOP/s (a multiply-add counts 2). Taking each worker's
// fastest chunk keeps the figure stable on a machine shared with other
// work. Benchmarks report products as a fraction of it. Without the
// assembly kernels it times a scalar Go loop instead.
func PeakGFLOPS(workers int, dur time.Duration) float64 {
	return peakGFLOPS(workers, dur, fmaChunk)
}

// peakGFLOPS is PeakGFLOPS with the peak loop chunk (it runs n
// iterations and returns their flops).
func peakGFLOPS(workers int, dur time.Duration, chunk func(n int) float64) float64 {
	workers = max(workers, 1)
	const iters = 1 << 13
	rates := make([]float64, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At least one chunk each: on a loaded machine a worker may
			// start after dur has passed.
			for first := true; first || time.Since(start) < dur; first = false {
				t := time.Now()
				f := chunk(iters)
				if el := time.Since(t).Seconds(); el > 0 {
					rates[w] = max(rates[w], f/el)
				}
			}
		}()
	}
	wg.Wait()
	var total float64
	for _, r := range rates {
		total += r
	}
	return total / 1e9
}

// BestOf runs f and ref alternately reps times and returns the best
// (shortest) time of each in seconds: on a shared machine the best of
// interleaved runs is the fairest side-by-side comparison. Benchmarks use
// it to set a kernel against a reference (PeakGFLOPS, a copy) measured in
// the same run.
func BestOf(reps int, f, ref func()) (tf, tref float64) {
	tf, tref = math.Inf(1), math.Inf(1)
	for range reps {
		t := time.Now()
		f()
		tf = min(tf, time.Since(t).Seconds())
		t = time.Now()
		ref()
		tref = min(tref, time.Since(t).Seconds())
	}
	return tf, tref
}

// scalarFMALoop is the portable peak loop: n iterations of 8 independent
// multiply-adds (16 flops); it returns a value so the work is kept.
func scalarFMALoop(n int) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	x, y := float32(0.999), float32(1e-7)
	for range n {
		s0 = s0*x + y
		s1 = s1*x + y
		s2 = s2*x + y
		s3 = s3*x + y
		s4 = s4*x + y
		s5 = s5*x + y
		s6 = s6*x + y
		s7 = s7*x + y
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}
