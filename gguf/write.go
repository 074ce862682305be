package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/gogml/gogml/runtime"
)

// Writer builds a GGUF file: metadata in the order it was first set, then
// tensor infos and data in the order tensors were added, laid out as
// ggml's gguf_write_to_file lays them out (each tensor's data padded with
// zeros to the alignment, the data section starting on it). The zero
// Writer is not usable; make one with NewWriter.
type Writer struct {
	version uint32
	align   uint64
	kv      []KV
	keys    map[string]int
	tensors []TensorInfo
	data    [][]byte
	names   map[string]int
	size    uint64 // data section bytes so far
}

// NewWriter returns an empty version-3 writer with the default alignment.
func NewWriter() *Writer {
	return &Writer{version: 3, align: DefaultAlignment, keys: map[string]int{}, names: map[string]int{}}
}

// SetVersion chooses the file version, 2 or 3 (their layouts are the
// same for little-endian files).
func (w *Writer) SetVersion(v uint32) error {
	if v != 2 && v != 3 {
		return fmt.Errorf("gguf: writer version %d, want 2 or 3: %w", v, ErrVersion)
	}
	w.version = v
	return nil
}

// Set sets key to v, replacing an earlier value in place. general.alignment
// must be a u32 power of two and can only be set before any tensor is
// added (it moves their offsets).
func (w *Writer) Set(key string, v Value) error {
	if key == "" {
		return fmt.Errorf("gguf: empty key: %w", ErrValue)
	}
	if v.v == nil {
		return fmt.Errorf("gguf: key %q: invalid (zero) value: %w", key, ErrValue)
	}
	if key == KeyAlignment {
		a, ok := As[uint32](v)
		if !ok || !runtime.IsPow2(uint64(a)) {
			return fmt.Errorf("gguf: %s must be a u32 power of two, got %s %s: %w", key, v.Type(), v, ErrValue)
		}
		if len(w.tensors) > 0 && uint64(a) != w.align {
			return fmt.Errorf("gguf: %s set after tensors were added: %w", key, ErrValue)
		}
		w.align = uint64(a)
	}
	if i, ok := w.keys[key]; ok {
		w.kv[i].Value = v
		return nil
	}
	w.keys[key] = len(w.kv)
	w.kv = append(w.kv, KV{Key: key, Value: v})
	return nil
}

// AddTensor appends a tensor of type typ and shape ne (1 to 4 dimensions)
// whose bytes are data: dense rows, len(data) equal to the tensor's size.
// The slice is kept, not copied, until WriteTo.
func (w *Writer) AddTensor(name string, typ runtime.Type, ne []int64, data []byte) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("gguf: tensor name %q: want 1..%d bytes: %w", name, MaxNameLen, ErrValue)
	}
	if _, dup := w.names[name]; dup {
		return fmt.Errorf("gguf: duplicate tensor %q: %w", name, ErrValue)
	}
	if !typ.Valid() {
		return fmt.Errorf("gguf: tensor %q: invalid type %d: %w", name, int32(typ), ErrValue)
	}
	if len(ne) < 1 || len(ne) > MaxDims {
		return fmt.Errorf("gguf: tensor %q: %d dimensions, want 1..%d: %w", name, len(ne), MaxDims, ErrValue)
	}
	t := TensorInfo{Name: name, Type: typ, Ne: [MaxDims]int64{1, 1, 1, 1}}
	for i, d := range ne {
		if d < 0 {
			return fmt.Errorf("gguf: tensor %q: dimension %d is %d: %w", name, i, d, ErrValue)
		}
		t.Ne[i] = d
	}
	// ggml writes ggml_n_dims: trailing dimensions of 1 are dropped.
	t.NDims = MaxDims
	for t.NDims > 1 && t.Ne[t.NDims-1] == 1 {
		t.NDims--
	}
	n, ok := tensorBytes(typ, t.Ne)
	if !ok {
		return fmt.Errorf("gguf: tensor %q: shape %v does not fit %s (rows of whole %d-element blocks, under 2^63 bytes): %w",
			name, ne, typ, typ.BlockSize(), ErrValue)
	}
	if uint64(len(data)) != n {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, its shape %v of %s needs %d: %w", name, len(data), ne, typ, n, ErrValue)
	}
	padded := runtime.AlignUp(n, w.align)
	if padded < n || w.size > math.MaxInt64-padded {
		return fmt.Errorf("gguf: tensor %q: data section over 2^63 bytes: %w", name, ErrValue)
	}
	t.Offset = w.size
	w.size += padded
	w.names[name] = len(w.tensors)
	w.tensors = append(w.tensors, t)
	w.data = append(w.data, data)
	return nil
}

// encoder writes little-endian fields and counts the bytes.
type encoder struct {
	w   *bufio.Writer
	n   int64
	buf [8]byte
}

// bytes writes p. A write error sticks in the bufio.Writer and Flush
// reports it; n counts the bytes meant to be written, so padding ends.
func (e *encoder) bytes(p []byte) {
	_, _ = e.w.Write(p)
	e.n += int64(len(p))
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.bytes(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.bytes(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	_, _ = e.w.WriteString(s)
	e.n += int64(len(s))
}

func (e *encoder) pad(align uint64) {
	var zero [64]byte
	for uint64(e.n)%align != 0 {
		k := min(align-uint64(e.n)%align, uint64(len(zero)))
		e.bytes(zero[:k])
	}
}

// scalar writes one non-array value without its type tag.
func (e *encoder) scalar(x any) {
	switch v := x.(type) {
	case uint8:
		e.bytes([]byte{v})
	case int8:
		e.bytes([]byte{byte(v)})
	case bool:
		b := byte(0)
		if v {
			b = 1
		}
		e.bytes([]byte{b})
	case uint16:
		binary.LittleEndian.PutUint16(e.buf[:2], v)
		e.bytes(e.buf[:2])
	case int16:
		binary.LittleEndian.PutUint16(e.buf[:2], uint16(v))
		e.bytes(e.buf[:2])
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	case string:
		e.str(v)
	}
}

// array writes an array's element type, count and elements.
func (e *encoder) array(v Value) {
	e.u32(uint32(v.elem))
	n := v.Len()
	e.u64(uint64(n))
	if nested, ok := v.v.([]Value); ok {
		for _, a := range nested {
			e.array(a)
		}
		return
	}
	for i := 0; i < n; i++ {
		e.scalar(v.index(i).v)
	}
}

// WriteTo writes the file to out and returns the bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	e := &encoder{w: bufio.NewWriterSize(out, 1<<20)}
	e.bytes([]byte(Magic))
	e.u32(w.version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		if kv.Value.typ == TypeArray {
			e.array(kv.Value)
		} else {
			e.scalar(kv.Value.v)
		}
	}
	for _, t := range w.tensors {
		e.str(t.Name)
		e.u32(uint32(t.NDims))
		for _, d := range t.Ne[:t.NDims] {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.Type))
		e.u64(t.Offset)
	}
	e.pad(w.align) // ggml pads here even without tensors
	for _, p := range w.data {
		e.bytes(p)
		e.pad(w.align)
	}
	if err := e.w.Flush(); err != nil {
		return e.n, fmt.Errorf("gguf: write: %w", err)
	}
	return e.n, nil
}

// WriteFile writes the file to path (created or truncated, mode 0644).
func (w *Writer) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}
