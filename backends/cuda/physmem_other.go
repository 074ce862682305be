//go:build !linux

package cuda

// physicalMemory returns 0 (unknown) where it is not implemented.
func physicalMemory() uint64 { return 0 }
