package vec

import "time"

// SIMD levels, lowest first. The kernels in use are those of the highest
// level the CPU and OS support, capped by the environment variable
// GOGML_CPU (generic, avx2 or avx512), read once at program start, so
// that tests and benchmarks can run every lower level on one machine.
const (
	levelGeneric = iota
	levelAVX2
	levelAVX512
)

var levelNames = [...]string{"generic", "avx2", "avx512"}

// Level names the SIMD level in use: "generic", "avx2" or "avx512".
func Level() string { return levelNames[cpuLevel] }

// PeakLevels lists the levels whose FMA peak PeakGFLOPSLevel can measure
// on this machine, lowest first (the ones the CPU supports, whatever
// GOGML_CPU says).
func PeakLevels() []string {
	var l []string
	for i := levelGeneric; i <= hwLevel; i++ {
		l = append(l, levelNames[i])
	}
	return l
}

// PeakGFLOPSLevel is PeakGFLOPS with the peak loop of the named level
// ("generic": a scalar Go loop; "avx2": 8-wide FMA; "avx512": 16-wide
// FMA). It returns 0 for a level the CPU lacks or an unknown name.
func PeakGFLOPSLevel(level string, workers int, dur time.Duration) float64 {
	for i, n := range levelNames {
		if n == level && i <= hwLevel {
			return peakGFLOPS(workers, dur, func(n int) float64 { return fmaChunkLevel(i, n) })
		}
	}
	return 0
}

// parseLevel maps GOGML_CPU's value to a level cap; "" and unknown names
// leave the hardware level.
func parseLevel(s string, hw int) int {
	for i, n := range levelNames {
		if n == s {
			return min(i, hw)
		}
	}
	return hw
}
