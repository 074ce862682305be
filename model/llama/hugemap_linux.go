package llama

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/gguf"
)

// The pagemap scan of Linux 6.7 (PAGEMAP_SCAN on /proc/self/pagemap,
// include/uapi/linux/fs.h), which golang.org/x/sys does not define.
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages uint64
	categoryInverted, categoryMask, categoryAnyofMask       uint64
	returnMask                                              uint64
}

type pageRegion struct{ start, end, categories uint64 }

const (
	pageIsHuge  = 1 << 6
	pagemapScan = 3<<30 | uint64(unsafe.Sizeof(pmScanArg{}))<<16 | 'f'<<8 | 16 // _IOWR('f', 16, struct pm_scan_arg)
)

// smallPages returns the ranges of b (offsets from b's first byte, in
// order) that the process does not map with huge-page entries: pages
// mapped 4 KiB at a time and pages not mapped at all. ok is false where
// the kernel cannot tell (before Linux 6.7), and then nothing is known.
func smallPages(b []byte) (ranges [][2]uint64, ok bool) {
	page := uint64(os.Getpagesize())
	if len(b) == 0 {
		return nil, true
	}
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	base := uint64(uintptr(unsafe.Pointer(&b[0])))
	start, end := base&^(page-1), (base+uint64(len(b))+page-1)&^(page-1)
	vec := make([]pageRegion, 256)
	for start < end {
		arg := pmScanArg{
			start: start, end: end,
			vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), vecLen: uint64(len(vec)),
			categoryInverted: pageIsHuge, categoryMask: pageIsHuge, returnMask: pageIsHuge,
		}
		arg.size = uint64(unsafe.Sizeof(arg))
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(pagemapScan), uintptr(unsafe.Pointer(&arg)))
		if errno != 0 {
			return nil, false
		}
		for _, r := range vec[:n] {
			lo, hi := max(r.start, base)-base, min(r.end, base+uint64(len(b)))-base
			if k := len(ranges); k > 0 && ranges[k-1][1] == lo {
				ranges[k-1][1] = hi // a region the scan split across calls
			} else {
				ranges = append(ranges, [2]uint64{lo, hi})
			}
		}
		if arg.walkEnd <= start {
			return nil, false
		}
		start = arg.walkEnd
	}
	return ranges, true
}

// populate asks for the mapping's pages in huge pages and maps them into
// the process now (MADV_POPULATE_READ, Linux 5.14; MADV_WILLNEED's
// read-ahead before it). Errors only lose the speed-up.
func populate(mf *gguf.Mapped) {
	_ = mf.Advise(unix.MADV_HUGEPAGE)
	if mf.Advise(unix.MADV_POPULATE_READ) != nil {
		_ = mf.Advise(unix.MADV_WILLNEED)
	}
}
