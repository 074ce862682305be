// Package gguf reads and writes GGUF files, ggml's model format, versions
// 2 and 3, with the byte layout of ggml 0.27.0's gguf.cpp: a header
// ("GGUF", version, tensor count, key count), typed metadata key/value
// pairs (every value type, arrays and nested arrays), tensor infos (name,
// shape, ggml type, offset into the data section), padding to
// general.alignment (32 by default), then the tensor data, each tensor
// padded to the alignment.
//
// Parse reads a file held in memory and Open maps a file (read-only, no
// copy) and parses it; the tensors' bytes are then slices of the mapping.
// Every count, length, offset and size is checked against the bytes that
// remain before anything is allocated for it, so a hostile file gets an
// error wrapping ErrFormat that names the field and its byte position.
//
// Writer builds a file: metadata in insertion order and tensors laid out
// one after another exactly as ggml's gguf_write_to_file does, so ggml's
// reader (and llama.cpp) accept them.
package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/gogml/gogml/runtime"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment of a file without
// general.alignment.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that sets the data alignment; its value
// must be a uint32 power of two.
const KeyAlignment = "general.alignment"

// MaxNameLen is the longest tensor name ggml accepts (GGML_MAX_NAME - 1).
const MaxNameLen = 63

// MaxDims is the most dimensions a tensor has.
const MaxDims = 4

// maxDepth bounds how deeply arrays may nest.
const maxDepth = 16

var (
	// ErrFormat is wrapped by every error about a malformed file.
	ErrFormat = errors.New("gguf: malformed file")
	// ErrVersion is wrapped when the version is not 2 or 3.
	ErrVersion = errors.New("gguf: unsupported version")
	// ErrValue is wrapped when a value cannot be stored (writer) or has
	// the wrong type for its key.
	ErrValue = errors.New("gguf: bad value")
	// ErrNotFound is wrapped when a key or tensor is missing.
	ErrNotFound = errors.New("gguf: not found")
)

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	// Name is unique in the file, at most MaxNameLen bytes.
	Name string
	// NDims is the number of dimensions stored in the file (1..4, or 0
	// for a file written that way); Ne holds all four, 1 past NDims.
	NDims int
	Ne    [MaxDims]int64
	// Type is the ggml element type.
	Type runtime.Type
	// Offset is the position of the first byte in the data section, a
	// multiple of the file's alignment.
	Offset uint64
}

// NElements is the number of elements.
func (t TensorInfo) NElements() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NBytes is the size of the tensor's data (dense rows of whole blocks).
func (t TensorInfo) NBytes() uint64 {
	n, _ := tensorBytes(t.Type, t.Ne)
	return n
}

// Shape returns the first NDims dimensions (at least one).
func (t TensorInfo) Shape() []int64 {
	return append([]int64(nil), t.Ne[:max(t.NDims, 1)]...)
}

// tensorBytes is the dense size of a tensor; false on overflow or for a
// row that is not whole blocks.
func tensorBytes(typ runtime.Type, ne [MaxDims]int64) (n uint64, ok bool) {
	bs := typ.BlockSize()
	if bs <= 0 || ne[0] < 0 || ne[0]%bs != 0 {
		return 0, false
	}
	// The element count must fit an int64 (as ggml checks), and so must
	// the byte count.
	elems := uint64(1)
	for _, d := range ne {
		if elems, ok = mulCheck(elems, uint64(d)); !ok {
			return 0, false
		}
	}
	n = uint64(ne[0] / bs)
	if n, ok = mulCheck(n, typ.Size()); !ok {
		return 0, false
	}
	for _, d := range ne[1:] {
		if n, ok = mulCheck(n, uint64(d)); !ok {
			return 0, false
		}
	}
	return n, true
}

// mulCheck is a*b, false when the product exceeds MaxInt64.
func mulCheck(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0 && lo <= math.MaxInt64
}

// File is a parsed GGUF file: its header, metadata and tensor infos.
type File struct {
	// Version is 2 or 3.
	Version uint32
	// Alignment is general.alignment, or DefaultAlignment.
	Alignment uint64
	// KV is the metadata in file order.
	KV []KV
	// Tensors are the tensor infos in file order.
	Tensors []TensorInfo
	// DataOffset is where the data section starts in the file, a multiple
	// of Alignment when the file has tensors.
	DataOffset uint64
	// Size is the size of the file in bytes.
	Size uint64

	keys    map[string]int
	tensors map[string]int
}

// Get returns the value of key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// String returns the string value of key, with an error naming the key when
// it is missing or not a string.
func (f *File) String(key string) (string, error) {
	return lookup(f, key, "a string", As[string])
}

// Int returns the integer value of key (any integer type), with an error
// naming the key when it is missing or not an integer.
func (f *File) Int(key string) (int64, error) {
	return lookup(f, key, "an integer", Value.Int)
}

// Float returns the float value of key (f32 or f64), with an error naming
// the key when it is missing or not a float.
func (f *File) Float(key string) (float64, error) {
	return lookup(f, key, "a float", Value.Float)
}

// lookup gets key's value through conv, with errors naming the key.
func lookup[T any](f *File, key, want string, conv func(Value) (T, bool)) (T, error) {
	var zero T
	v, ok := f.Get(key)
	if !ok {
		return zero, fmt.Errorf("gguf: key %q: %w", key, ErrNotFound)
	}
	x, ok := conv(v)
	if !ok {
		return zero, fmt.Errorf("gguf: key %q is a %s, want %s: %w", key, v.Type(), want, ErrValue)
	}
	return x, nil
}

// decoder reads little-endian fields from b, tracking the position.
type decoder struct {
	b   []byte
	off uint64
}

func (d *decoder) remain() uint64 { return uint64(len(d.b)) - d.off }

func (d *decoder) errf(what string, format string, args ...any) error {
	return fmt.Errorf("gguf: %s at byte %d: %s: %w", what, d.off, fmt.Sprintf(format, args...), ErrFormat)
}

func (d *decoder) take(n uint64, what string) ([]byte, error) {
	if n > d.remain() {
		return nil, d.errf(what, "needs %d bytes, %d left in the file", n, d.remain())
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	p, err := d.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	p, err := d.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > d.remain() {
		d.off -= 8
		return "", d.errf(what, "length %d exceeds the %d bytes left in the file", n, d.remain()-8)
	}
	p, _ := d.take(n, what)
	return string(p), nil
}

// count reads an element count and checks that n elements of at least
// minSize bytes each fit in the rest of the file.
func (d *decoder) count(what string, minSize uint64) (uint64, error) {
	n, err := d.u64(what)
	if err != nil {
		return 0, err
	}
	if minSize > 0 && n > d.remain()/minSize {
		d.off -= 8
		return 0, d.errf(what, "%d elements of at least %d bytes do not fit in the %d bytes left", n, minSize, d.remain()-8)
	}
	return n, nil
}

// scalar reads one value of a non-array type.
func (d *decoder) scalar(t ValueType, what string) (Value, error) {
	if t == TypeString {
		s, err := d.str(what)
		return Of(s), err
	}
	sz := t.fixedSize()
	if sz == 0 {
		return Value{}, d.errf(what, "invalid value type %d", uint32(t))
	}
	p, err := d.take(sz, what)
	if err != nil {
		return Value{}, err
	}
	switch t {
	case TypeUint8:
		return Of(p[0]), nil
	case TypeInt8:
		return Of(int8(p[0])), nil
	case TypeBool:
		return Of(p[0] != 0), nil
	case TypeUint16:
		return Of(binary.LittleEndian.Uint16(p)), nil
	case TypeInt16:
		return Of(int16(binary.LittleEndian.Uint16(p))), nil
	case TypeUint32:
		return Of(binary.LittleEndian.Uint32(p)), nil
	case TypeInt32:
		return Of(int32(binary.LittleEndian.Uint32(p))), nil
	case TypeFloat32:
		return Of(math.Float32frombits(binary.LittleEndian.Uint32(p))), nil
	case TypeUint64:
		return Of(binary.LittleEndian.Uint64(p)), nil
	case TypeInt64:
		return Of(int64(binary.LittleEndian.Uint64(p))), nil
	default: // TypeFloat64
		return Of(math.Float64frombits(binary.LittleEndian.Uint64(p))), nil
	}
}

func fixedArray[T Scalar](d *decoder, n uint64, sz uint64, conv func([]byte) T) Value {
	out := make([]T, n)
	for i := range out {
		out[i] = conv(d.b[d.off : d.off+sz])
		d.off += sz
	}
	return ArrayOf(out)
}

// array reads an array's element type, count and elements.
func (d *decoder) array(what string, depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, d.errf(what, "arrays nested more than %d deep", maxDepth)
	}
	et, err := d.u32(what + " element type")
	if err != nil {
		return Value{}, err
	}
	t := ValueType(et)
	if !t.Valid() {
		d.off -= 4
		return Value{}, d.errf(what, "invalid element type %d", et)
	}
	n, err := d.count(what+" element count", t.minSize())
	if err != nil {
		return Value{}, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeString:
		out := make([]string, n)
		for i := range out {
			if out[i], err = d.str(fmt.Sprintf("%s[%d]", what, i)); err != nil {
				return Value{}, err
			}
		}
		return ArrayOf(out), nil
	case TypeArray:
		out := make([]Value, n)
		for i := range out {
			if out[i], err = d.array(fmt.Sprintf("%s[%d]", what, i), depth+1); err != nil {
				return Value{}, err
			}
		}
		return Value{typ: TypeArray, elem: TypeArray, v: out}, nil
	case TypeUint8:
		return fixedArray(d, n, 1, func(p []byte) uint8 { return p[0] }), nil
	case TypeInt8:
		return fixedArray(d, n, 1, func(p []byte) int8 { return int8(p[0]) }), nil
	case TypeBool:
		return fixedArray(d, n, 1, func(p []byte) bool { return p[0] != 0 }), nil
	case TypeUint16:
		return fixedArray(d, n, 2, le.Uint16), nil
	case TypeInt16:
		return fixedArray(d, n, 2, func(p []byte) int16 { return int16(le.Uint16(p)) }), nil
	case TypeUint32:
		return fixedArray(d, n, 4, le.Uint32), nil
	case TypeInt32:
		return fixedArray(d, n, 4, func(p []byte) int32 { return int32(le.Uint32(p)) }), nil
	case TypeFloat32:
		return fixedArray(d, n, 4, func(p []byte) float32 { return math.Float32frombits(le.Uint32(p)) }), nil
	case TypeUint64:
		return fixedArray(d, n, 8, le.Uint64), nil
	case TypeInt64:
		return fixedArray(d, n, 8, func(p []byte) int64 { return int64(le.Uint64(p)) }), nil
	default: // TypeFloat64
		return fixedArray(d, n, 8, func(p []byte) float64 { return math.Float64frombits(le.Uint64(p)) }), nil
	}
}

// Parse reads the GGUF file held in data. The File keeps no reference to
// data: strings are copied out, tensor data stays where it is (DataOffset
// plus each tensor's Offset).
func Parse(data []byte) (*File, error) {
	d := &decoder{b: data}
	f := &File{Size: uint64(len(data)), Alignment: DefaultAlignment}
	magic, err := d.take(4, "magic")
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		d.off = 0
		return nil, d.errf("magic", "%q, want %q", magic, Magic)
	}
	if f.Version, err = d.u32("version"); err != nil {
		return nil, err
	}
	if f.Version != 2 && f.Version != 3 {
		hint := ""
		if f.Version&0xffff == 0 && f.Version != 0 {
			hint = " (a big-endian file?)"
		}
		return nil, fmt.Errorf("gguf: version %d at byte 4%s, want 2 or 3: %w", f.Version, hint, ErrVersion)
	}
	// Each tensor info takes at least 8 (name) + 4 (dims) + 4 (type) + 8
	// (offset) bytes, each key/value pair at least 8 + 4 + 1.
	nTensors, err := d.count("tensor count", 24)
	if err != nil {
		return nil, err
	}
	nKV, err := d.count("metadata key count", 13)
	if err != nil {
		return nil, err
	}
	f.KV = make([]KV, 0, nKV)
	f.keys = make(map[string]int, nKV)
	for i := uint64(0); i < nKV; i++ {
		at := d.off
		key, err := d.str(fmt.Sprintf("key %d", i))
		if err != nil {
			return nil, err
		}
		if key == "" {
			d.off = at
			return nil, d.errf(fmt.Sprintf("key %d", i), "empty key")
		}
		if j, dup := f.keys[key]; dup {
			d.off = at
			return nil, d.errf(fmt.Sprintf("key %d", i), "duplicate key %q (first is key %d)", key, j)
		}
		what := fmt.Sprintf("value of key %q", key)
		vt, err := d.u32(what + " type")
		if err != nil {
			return nil, err
		}
		var v Value
		switch t := ValueType(vt); {
		case t == TypeArray:
			v, err = d.array(what, 1)
		case t.Valid():
			v, err = d.scalar(t, what)
		default:
			d.off -= 4
			return nil, d.errf(what, "invalid value type %d", vt)
		}
		if err != nil {
			return nil, err
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if v, ok := f.Get(KeyAlignment); ok {
		a, ok := As[uint32](v)
		if !ok {
			return nil, fmt.Errorf("gguf: %s is a %s, want u32: %w", KeyAlignment, v.Type(), ErrFormat)
		}
		if !runtime.IsPow2(uint64(a)) {
			return nil, fmt.Errorf("gguf: %s = %d is not a power of two: %w", KeyAlignment, a, ErrFormat)
		}
		f.Alignment = uint64(a)
	}
	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tensors = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		ti, err := d.tensorInfo(i, f.tensors)
		if err != nil {
			return nil, err
		}
		f.tensors[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}
	f.DataOffset = d.off
	if nTensors > 0 {
		f.DataOffset = runtime.AlignUp(d.off, f.Alignment)
		if f.DataOffset > f.Size {
			return nil, fmt.Errorf("gguf: data section at byte %d (aligned to %d) is past the end of the %d-byte file: %w",
				f.DataOffset, f.Alignment, f.Size, ErrFormat)
		}
	}
	room := f.Size - f.DataOffset
	for _, t := range f.Tensors {
		n := t.NBytes()
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: data offset %d is not a multiple of the alignment %d: %w", t.Name, t.Offset, f.Alignment, ErrFormat)
		}
		if t.Offset > room || n > room-t.Offset {
			return nil, fmt.Errorf("gguf: tensor %q: %d bytes at data offset %d (file byte %d) run past the end of the %d-byte file: %w",
				t.Name, n, t.Offset, f.DataOffset+t.Offset, f.Size, ErrFormat)
		}
	}
	return f, nil
}

// tensorInfo reads the i-th tensor info and checks its name, shape and
// type; seen holds the names read so far.
func (d *decoder) tensorInfo(i uint64, seen map[string]int) (TensorInfo, error) {
	var t TensorInfo
	what := fmt.Sprintf("tensor %d", i)
	at := d.off
	name, err := d.str(what + " name")
	if err != nil {
		return t, err
	}
	if len(name) > MaxNameLen {
		d.off = at
		return t, d.errf(what+" name", "%d bytes, at most %d allowed", len(name), MaxNameLen)
	}
	if j, dup := seen[name]; dup {
		d.off = at
		return t, d.errf(what+" name", "duplicate tensor name %q (first is tensor %d)", name, j)
	}
	t.Name = name
	what = fmt.Sprintf("tensor %q", name)
	nd, err := d.u32(what + " dimension count")
	if err != nil {
		return t, err
	}
	if nd > MaxDims {
		d.off -= 4
		return t, d.errf(what, "%d dimensions, at most %d", nd, MaxDims)
	}
	t.NDims = int(nd)
	t.Ne = [MaxDims]int64{1, 1, 1, 1}
	for j := 0; j < t.NDims; j++ {
		v, err := d.u64(fmt.Sprintf("%s dimension %d", what, j))
		if err != nil {
			return t, err
		}
		if int64(v) < 0 {
			d.off -= 8
			return t, d.errf(what, "dimension %d is %d, negative", j, int64(v))
		}
		t.Ne[j] = int64(v)
	}
	typ, err := d.u32(what + " type")
	if err != nil {
		return t, err
	}
	t.Type = runtime.Type(typ)
	if int32(typ) < 0 || !t.Type.Valid() {
		d.off -= 4
		return t, d.errf(what, "invalid ggml type %d", typ)
	}
	if bs := t.Type.BlockSize(); t.Ne[0]%bs != 0 {
		d.off -= 4
		return t, d.errf(what, "%d elements per row of %s, not a multiple of its block size %d", t.Ne[0], t.Type, bs)
	}
	if _, ok := tensorBytes(t.Type, t.Ne); !ok {
		d.off -= 4
		return t, d.errf(what, "shape %v of %s is more than 2^63 bytes", t.Ne, t.Type)
	}
	if t.Offset, err = d.u64(what + " data offset"); err != nil {
		return t, err
	}
	return t, nil
}
