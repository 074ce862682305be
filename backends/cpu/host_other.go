//go:build !linux

package cpu

import "errors"

// hostMemory reports no figures: sysinfo(2) is Linux's.
func hostMemory() (total, free uint64, ok bool) { return 0, 0, false }

// adviseHugePages fails: MADV_HUGEPAGE (transparent huge pages) is Linux's,
// so a buffer type that asks for huge pages cannot map its buffers here.
func adviseHugePages([]byte) error {
	return errors.New("transparent huge pages are Linux's")
}
