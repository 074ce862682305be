package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to evict file's clean pages (they are reread
// from disk on the next access).
func dropCache(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("fdatasync %s: %w", file, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise %s: %w", file, err)
	}
	return nil
}
