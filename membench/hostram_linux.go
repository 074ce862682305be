package membench

import (
	"math"

	"golang.org/x/sys/unix"
)

// hostRAM is the machine's RAM in bytes (sysinfo(2)), or a huge number
// when unknown.
func hostRAM() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return math.MaxInt64
	}
	return uint64(si.Totalram) * uint64(max(si.Unit, 1))
}
