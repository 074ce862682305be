package cpu

import "golang.org/x/sys/unix"

// hostMemory returns the machine's total memory and the memory free for
// new allocations (free plus buffers), from sysinfo(2); ok is false where
// the call fails.
func hostMemory() (total, free uint64, ok bool) {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0, 0, false
	}
	unit := uint64(si.Unit)
	if unit == 0 {
		unit = 1
	}
	return uint64(si.Totalram) * unit, (uint64(si.Freeram) + uint64(si.Bufferram)) * unit, true
}

// adviseHugePages asks the kernel to back m with transparent huge pages.
func adviseHugePages(m []byte) error { return unix.Madvise(m, unix.MADV_HUGEPAGE) }
