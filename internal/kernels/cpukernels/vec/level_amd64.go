//go:build amd64 && !purego

package vec

import (
	"os"

	"golang.org/x/sys/cpu"
)

// hwLevel is the highest level this CPU and OS support: avx512 needs
// AVX-512 F, BW, VL and DQ (the OS saving the ZMM state is part of
// x/sys/cpu's check); avx2 needs AVX2 and FMA.
var hwLevel = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return levelAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return levelAVX2
	}
	return levelGeneric
}()

// cpuLevel is the level in use, set once at program start.
var cpuLevel = parseLevel(os.Getenv("GOGML_CPU"), hwLevel)

// useAVX512 selects the AVX-512 kernels; set once at program start.
var useAVX512 = cpuLevel >= levelAVX512

//go:noescape
func fmaLoop512(n int)

func fmaChunkLevel(level, n int) float64 {
	switch level {
	case levelAVX512:
		fmaLoop512(n)
		return float64(n) * 12 * 16 * 2
	case levelAVX2:
		fmaLoop(n)
		return float64(n) * 12 * 8 * 2
	}
	if scalarFMALoop(n) == -1 {
		return 0
	}
	return float64(n) * 16
}
