//go:build !linux

package llama

import (
	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/gguf"
)

// smallPages reports that nothing is known of how b is mapped: only
// Linux tells (hugemap_linux.go).
func smallPages(b []byte) (ranges [][2]uint64, ok bool) { return nil, false }

// populate asks for read-ahead of the mapping's pages (MADV_WILLNEED):
// huge pages and MADV_POPULATE_READ are Linux's. Errors only lose the
// speed-up.
func populate(mf *gguf.Mapped) { _ = mf.Advise(unix.MADV_WILLNEED) }
