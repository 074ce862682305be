package rpcserver

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
)

// fnvOffset and fnvPrime are FNV-1a's 64-bit constants, the hash ggml's
// RPC client names cached tensor data by.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// fnv1a continues an FNV-1a hash over p.
func fnv1a(h uint64, p []byte) uint64 {
	for _, b := range p {
		h ^= uint64(b)
		h *= fnvPrime
	}
	return h
}

// cacheWriter stores streamed tensor data in the cache directory under the
// FNV-1a hash of the data, as ggml's rpc-server -c does: written to a
// temporary file, renamed when complete.
type cacheWriter struct {
	dir  string
	f    *os.File
	hash uint64
	err  error
	path string
}

func newCacheWriter(dir string) *cacheWriter {
	w := &cacheWriter{dir: dir, hash: fnvOffset}
	w.f, w.err = os.CreateTemp(dir, ".rpc-cache-*")
	return w
}

func (w *cacheWriter) write(p []byte) {
	w.hash = fnv1a(w.hash, p)
	if w.err == nil {
		_, w.err = w.f.Write(p)
	}
}

// finish renames the file to its hash when ok, else removes it.
func (w *cacheWriter) finish(ok bool) error {
	if w.f == nil {
		return w.err
	}
	tmp := w.f.Name()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	if !ok || w.err != nil {
		os.Remove(tmp)
		return w.err
	}
	w.path = filepath.Join(w.dir, fmt.Sprintf("%016x", w.hash))
	if err := os.Rename(tmp, w.path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// mul64 returns the 128-bit product of a and b as (hi, lo).
func mul64(a, b uint64) (uint64, uint64) { return bits.Mul64(a, b) }
