//go:build !linux

package main

import (
	"errors"
	"fmt"
)

// dropCache fails: evicting a file's pages (posix_fadvise
// POSIX_FADV_DONTNEED) is done only on Linux, where the peer runs.
func dropCache(file string) error {
	return fmt.Errorf("dropping %s's cached pages: %w", file, errors.ErrUnsupported)
}
