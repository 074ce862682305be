package gguf

import (
	"fmt"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// Mapped is a GGUF file mapped read-only into memory and parsed. Its
// tensors' bytes are slices of the mapping: nothing is copied, and pages
// are read from the file when first touched. It is safe for concurrent
// reads; Close unmaps it, after which no slice it returned may be used.
type Mapped struct {
	*File
	// Path is the file's name as given to Open.
	Path string
	data []byte
}

// Open maps the file at path and parses it. The mapping is shared and
// read-only (PROT_READ): writing through a returned slice faults.
func Open(path string) (*Mapped, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file: %w", path, ErrFormat)
	}
	if size < 4 {
		return nil, fmt.Errorf("gguf: %s: %d bytes, too short for a GGUF header: %w", path, size, ErrFormat)
	}
	if uint64(size) > math.MaxInt {
		return nil, fmt.Errorf("gguf: %s: %d bytes do not fit in the address space: %w", path, size, ErrFormat)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s (%d bytes): %w", path, size, err)
	}
	f, err := Parse(data)
	if err != nil {
		_ = unix.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Mapped{File: f, Path: path, data: data}, nil
}

// Bytes returns the whole mapping. It must not be written to.
func (m *Mapped) Bytes() []byte { return m.data }

// TensorData returns the bytes of tensor t (one of m.Tensors) inside the
// mapping. Parse checked that they lie inside the file.
func (m *Mapped) TensorData(t TensorInfo) ([]byte, error) {
	if m.data == nil {
		return nil, fmt.Errorf("gguf: %s: tensor %q: file is closed: %w", m.Path, t.Name, os.ErrClosed)
	}
	start := m.DataOffset + t.Offset
	n := t.NBytes()
	if t.Offset > m.Size-m.DataOffset || n > m.Size-start {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %d bytes at byte %d outside the file: %w", m.Path, t.Name, n, start, ErrFormat)
	}
	return m.data[start : start+n : start+n], nil
}

// Advise tells the kernel how the mapping will be read (for example
// unix.MADV_SEQUENTIAL before a one-pass upload, unix.MADV_WILLNEED to
// prefetch); errors are returned, not fatal.
func (m *Mapped) Advise(advice int) error {
	if m.data == nil {
		return os.ErrClosed
	}
	return unix.Madvise(m.data, advice)
}

// Close unmaps the file. Closing twice is an error wrapping os.ErrClosed.
func (m *Mapped) Close() error {
	if m.data == nil {
		return fmt.Errorf("gguf: %s: %w", m.Path, os.ErrClosed)
	}
	d := m.data
	m.data = nil
	return unix.Munmap(d)
}
