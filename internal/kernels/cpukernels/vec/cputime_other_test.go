//go:build !unix

package vec

// cpuSeconds is unavailable here; 0 disables the per-CPU-second figures.
func cpuSeconds() float64 { return 0 }
