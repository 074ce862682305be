//go:build !linux

package llama

// smallPages reports that nothing is known of how b is mapped: only
// Linux tells (hugemap_linux.go).
func smallPages(b []byte) (ranges [][2]uint64, ok bool) { return nil, false }
