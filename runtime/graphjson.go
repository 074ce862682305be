package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// GraphFormat is the format tag of graph files.
const GraphFormat = "graph/v1"

// GraphFile is a parsed graph file (shared/spec/graph-json.md): the buffer
// types to plan for, the allocator's buffer list, every tensor (its id is
// its position in Tensors) and the graph over them.
type GraphFile struct {
	BufferTypes []*VirtualBufferType
	// Buffers is the allocator's buffer list: indices into BufferTypes.
	Buffers []int
	Tensors []*Tensor
	Graph   *Graph
	// LeafBufferIDs and NodeBufferIDs index Buffers per leaf and node; nil
	// when the file leaves them out (all 0).
	LeafBufferIDs, NodeBufferIDs []int
}

// BufferList returns the buffer types of the allocator's buffer list.
func (f *GraphFile) BufferList() []BufferType {
	out := make([]BufferType, len(f.Buffers))
	for i, b := range f.Buffers {
		out[i] = f.BufferTypes[b]
	}
	return out
}

type jsonBufferType struct {
	Name      string `json:"name"`
	Alignment int64  `json:"alignment"`
	MaxSize   int64  `json:"max_size"`
	AllocPad  *int64 `json:"alloc_pad,omitempty"`
}

type jsonTensor struct {
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	Ne           []int64  `json:"ne"`
	Nb           []int64  `json:"nb,omitempty"`
	Op           string   `json:"op"`
	Src          []*int64 `json:"src,omitempty"`
	ViewSrc      *int64   `json:"view_src,omitempty"`
	ViewOffs     *int64   `json:"view_offs,omitempty"`
	Flags        []string `json:"flags,omitempty"`
	Preallocated *bool    `json:"preallocated,omitempty"`
}

type jsonGraph struct {
	Format        string           `json:"format"`
	BufferTypes   []jsonBufferType `json:"buffer_types"`
	Buffers       []int64          `json:"buffers,omitempty"`
	Tensors       []jsonTensor     `json:"tensors"`
	Leafs         []int64          `json:"leafs"`
	Nodes         []int64          `json:"nodes"`
	LeafBufferIDs []int64          `json:"leaf_buffer_ids,omitempty"`
	NodeBufferIDs []int64          `json:"node_buffer_ids,omitempty"`
}

// graphKeys are the keys a graph file may use, spelled exactly.
var graphKeys = JSONFieldNames(reflect.TypeFor[jsonGraph](), reflect.TypeFor[jsonBufferType](), reflect.TypeFor[jsonTensor]())

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// ReadGraphFile parses and validates a graph file. Every problem — malformed
// JSON, unknown keys, types or ops, bad shapes, sizes that overflow, views
// outside their base or of a view, cycles, ids out of range — is an error
// that names the tensor or field; nothing panics.
func ReadGraphFile(r io.Reader) (*GraphFile, error) {
	data, err := readCapped(r, MaxGraphFileSize)
	if err != nil {
		return nil, err
	}
	return ParseGraphFile(data)
}

// readCapped reads r to its end, or fails once it passes limit bytes.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read graph file: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, formatErr("graph file larger than %d bytes", limit)
	}
	return data, nil
}

// MaxGraphFileSize is the largest graph file ReadGraphFile reads (corpus
// files average about 110 bytes a tensor, so two million tensors fit);
// past it, it stops reading and returns an error instead of filling
// memory.
const MaxGraphFileSize = 256 << 20

// ParseGraphFile is ReadGraphFile over bytes.
func ParseGraphFile(data []byte) (*GraphFile, error) {
	if err := CheckJSONKeys(data, graphKeys); err != nil {
		return nil, formatErr("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var jg jsonGraph
	if err := dec.Decode(&jg); err != nil {
		return nil, formatErr("%v", err)
	}
	if dec.More() {
		return nil, formatErr("trailing data after the graph object")
	}
	if jg.Format != GraphFormat {
		return nil, formatErr("format %q, want %q", jg.Format, GraphFormat)
	}
	f := &GraphFile{}
	if len(jg.BufferTypes) == 0 {
		return nil, formatErr("no buffer_types")
	}
	for i, bt := range jg.BufferTypes {
		if bt.Alignment <= 0 || !IsPow2(uint64(bt.Alignment)) {
			return nil, fmt.Errorf("%w: buffer_types[%d] %q: alignment %d is not a power of two: %w", ErrFormat, i, bt.Name, bt.Alignment, ErrAlignment)
		}
		if bt.MaxSize < 0 {
			return nil, formatErr("buffer_types[%d] %q: negative max_size %d", i, bt.Name, bt.MaxSize)
		}
		pad := int64(1)
		if bt.AllocPad != nil {
			pad = *bt.AllocPad
			if pad < 1 {
				return nil, formatErr("buffer_types[%d] %q: alloc_pad %d, want a positive integer", i, bt.Name, pad)
			}
		}
		maxSize := uint64(bt.MaxSize)
		if maxSize == 0 {
			maxSize = NoMaxSize
		}
		f.BufferTypes = append(f.BufferTypes, &VirtualBufferType{
			TypeName: bt.Name, Align: uint64(bt.Alignment), Max: maxSize, AllocPad: uint64(pad)})
	}
	if jg.Buffers == nil {
		jg.Buffers = []int64{0}
	}
	if len(jg.Buffers) == 0 {
		return nil, formatErr("empty buffers list")
	}
	for i, b := range jg.Buffers {
		if b < 0 || b >= int64(len(f.BufferTypes)) {
			return nil, formatErr("buffers[%d] = %d, have %d buffer types", i, b, len(f.BufferTypes))
		}
		f.Buffers = append(f.Buffers, int(b))
	}

	nt := int64(len(jg.Tensors))
	f.Tensors = make([]*Tensor, nt)
	for i := range f.Tensors {
		f.Tensors[i] = &Tensor{}
	}
	for i, jt := range jg.Tensors {
		if err := decodeTensor(f.Tensors, i, &jt); err != nil {
			return nil, err
		}
	}
	// Views: base must be a non-view, the view inside it, preallocated
	// agreeing. Done after all tensors are decoded.
	for i, jt := range jg.Tensors {
		t := f.Tensors[i]
		if t.ViewSrc == nil {
			continue
		}
		base := t.ViewSrc
		if base.ViewSrc != nil {
			return nil, fmt.Errorf("tensor %d %q: view_src names %q, itself a view (name its base and sum the offsets): %w", i, t.Name, base.Name, ErrView)
		}
		n, bn := t.NBytes(), base.NBytes()
		if t.ViewOffs > bn || n > bn-t.ViewOffs {
			return nil, fmt.Errorf("tensor %d %q: %d bytes at view_offs %d outside its base %q of %d bytes: %w", i, t.Name, n, t.ViewOffs, base.Name, bn, ErrView)
		}
		if jt.Preallocated != nil && *jt.Preallocated != base.Preallocated {
			return nil, fmt.Errorf("tensor %d %q: preallocated=%v but its base %q has preallocated=%v: %w", i, t.Name, *jt.Preallocated, base.Name, base.Preallocated, ErrView)
		}
		t.Preallocated = base.Preallocated
	}
	if err := checkAcyclic(f.Tensors); err != nil {
		return nil, err
	}
	ids := func(field string, list []int64) ([]*Tensor, error) {
		out := make([]*Tensor, len(list))
		for i, id := range list {
			if id < 0 || id >= nt {
				return nil, formatErr("%s[%d] = %d, have %d tensors", field, i, id, nt)
			}
			out[i] = f.Tensors[id]
		}
		return out, nil
	}
	leafs, err := ids("leafs", jg.Leafs)
	if err != nil {
		return nil, err
	}
	nodes, err := ids("nodes", jg.Nodes)
	if err != nil {
		return nil, err
	}
	if f.Graph, err = NewGraphFrom(leafs, nodes); err != nil {
		return nil, err
	}
	bufIDs := func(field string, list []int64, want int) ([]int, error) {
		if list == nil {
			return nil, nil
		}
		if len(list) != want {
			return nil, formatErr("%s has %d entries, want %d", field, len(list), want)
		}
		out := make([]int, len(list))
		for i, b := range list {
			if b < 0 || b >= int64(len(f.Buffers)) {
				return nil, formatErr("%s[%d] = %d, have %d buffers", field, i, b, len(f.Buffers))
			}
			out[i] = int(b)
		}
		return out, nil
	}
	if f.LeafBufferIDs, err = bufIDs("leaf_buffer_ids", jg.LeafBufferIDs, len(leafs)); err != nil {
		return nil, err
	}
	if f.NodeBufferIDs, err = bufIDs("node_buffer_ids", jg.NodeBufferIDs, len(nodes)); err != nil {
		return nil, err
	}
	return f, nil
}

func decodeTensor(all []*Tensor, i int, jt *jsonTensor) error {
	t := all[i]
	t.Name = jt.Name
	where := func() string { return fmt.Sprintf("tensor %d %q", i, jt.Name) }
	typ, err := ParseType(jt.Type)
	if err != nil || jt.Type != strings.ToLower(jt.Type) {
		return fmt.Errorf("%s: %w: %q", where(), ErrUnknownType, jt.Type)
	}
	t.Type = typ
	if len(jt.Ne) < 1 || len(jt.Ne) > MaxDims {
		return fmt.Errorf("%s: %w: ne has %d values, want 1 to %d", where(), ErrShape, len(jt.Ne), MaxDims)
	}
	for d := range t.Ne {
		t.Ne[d] = 1
	}
	copy(t.Ne[:], jt.Ne)
	for d, n := range t.Ne {
		if n < 1 {
			return fmt.Errorf("%s: %w: ne[%d] = %d, want at least 1", where(), ErrShape, d, n)
		}
	}
	if t.Ne[0]%typ.BlockSize() != 0 {
		return fmt.Errorf("%s: %w: ne[0] = %d is not a multiple of %s's block size %d", where(), ErrShape, t.Ne[0], typ, typ.BlockSize())
	}
	if jt.Nb != nil {
		if len(jt.Nb) != MaxDims {
			return fmt.Errorf("%s: %w: nb has %d values, want %d", where(), ErrShape, len(jt.Nb), MaxDims)
		}
		for d, b := range jt.Nb {
			if b < 0 {
				return fmt.Errorf("%s: %w: nb[%d] = %d is negative", where(), ErrShape, d, b)
			}
			t.Nb[d] = uint64(b)
		}
	} else {
		nb, err := contiguousStrides(typ, t.Ne)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		t.Nb = nb
	}
	if err := checkShape(typ, t.Ne, t.Nb); err != nil {
		return fmt.Errorf("%s: %w", where(), err)
	}
	op, err := ParseOp(jt.Op)
	if err != nil {
		return fmt.Errorf("%s: %w", where(), err)
	}
	t.Op = op
	if len(jt.Src) > MaxSrc {
		return fmt.Errorf("%s: %w: %d sources, at most %d", where(), ErrGraph, len(jt.Src), MaxSrc)
	}
	for j, s := range jt.Src {
		if s == nil {
			continue
		}
		if *s < 0 || *s >= int64(len(all)) {
			return fmt.Errorf("%s: %w: src[%d] = %d, have %d tensors", where(), ErrGraph, j, *s, len(all))
		}
		t.Src[j] = all[*s]
	}
	if (jt.ViewSrc == nil) != (jt.ViewOffs == nil) {
		return fmt.Errorf("%s: %w: view_src and view_offs come together", where(), ErrView)
	}
	if jt.ViewSrc != nil {
		vs, vo := *jt.ViewSrc, *jt.ViewOffs
		if vs < 0 || vs >= int64(len(all)) {
			return fmt.Errorf("%s: %w: view_src = %d, have %d tensors", where(), ErrView, vs, len(all))
		}
		if vs == int64(i) {
			return fmt.Errorf("%s: %w: a tensor cannot view itself", where(), ErrView)
		}
		if vo < 0 {
			return fmt.Errorf("%s: %w: negative view_offs %d", where(), ErrView, vo)
		}
		t.ViewSrc, t.ViewOffs = all[vs], uint64(vo)
	}
	for _, fl := range jt.Flags {
		found := false
		for _, fn := range flagNames {
			if fn.name == fl {
				t.Flags |= fn.f
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %w: unknown flag %q", where(), ErrFormat, fl)
		}
	}
	if jt.Preallocated != nil && t.ViewSrc == nil {
		t.Preallocated = *jt.Preallocated
	}
	return nil
}

// checkAcyclic rejects tensors whose sources (or view sources) lead back
// to themselves.
func checkAcyclic(ts []*Tensor) error {
	id := make(map[*Tensor]int, len(ts))
	for i, t := range ts {
		id[t] = i
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(ts))
	type frame struct{ i, next int }
	for root := range ts {
		if color[root] != white {
			continue
		}
		color[root] = grey
		stack := []frame{{root, 0}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			t := ts[f.i]
			if f.next > MaxSrc {
				color[f.i] = black
				stack = stack[:len(stack)-1]
				continue
			}
			var s *Tensor
			if f.next < MaxSrc {
				s = t.Src[f.next]
			} else {
				s = t.ViewSrc
			}
			f.next++
			if s == nil {
				continue
			}
			j := id[s]
			switch color[j] {
			case grey:
				return fmt.Errorf("tensor %d %q: %w: cycle through source %d %q", f.i, t.Name, ErrGraph, j, s.Name)
			case white:
				color[j] = grey
				stack = append(stack, frame{j, 0})
			}
		}
	}
	return nil
}

// WriteGraphFile writes f in the graph/v1 format, one tensor per line. The
// same file gives the same bytes. The format records what planning needs
// (types, shapes, strides, ops, sources, views, flags): op parameters and
// the Go functions of custom ops are not written, so a graph read back
// plans the same but a backend refuses to compute its custom ops.
func WriteGraphFile(w io.Writer, f *GraphFile) error {
	id := make(map[*Tensor]int, len(f.Tensors))
	for i, t := range f.Tensors {
		id[t] = i
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"format\": \"graph/v1\",\n  \"buffer_types\": [\n")
	for i, bt := range f.BufferTypes {
		ms := uint64(0)
		if bt.Max != NoMaxSize {
			ms = bt.Max
		}
		fmt.Fprintf(&b, "    {\"name\": %s, \"alignment\": %d, \"max_size\": %d", jsonString(bt.TypeName), bt.Align, ms)
		if bt.AllocPad > 1 {
			fmt.Fprintf(&b, ", \"alloc_pad\": %d", bt.AllocPad)
		}
		b.WriteString("}")
		b.WriteString(sep(i, len(f.BufferTypes)))
	}
	b.WriteString("  ],\n  \"buffers\": " + intList(f.Buffers) + ",\n  \"tensors\": [\n")
	for i, t := range f.Tensors {
		fmt.Fprintf(&b, "    {\"name\": %s, \"type\": %q, \"ne\": %s", jsonString(t.Name), t.Type.String(), int64List(t.Ne[:t.NDims()]))
		if t.Nb != ContiguousStrides(t.Type, t.Ne) {
			fmt.Fprintf(&b, ", \"nb\": [%d, %d, %d, %d]", t.Nb[0], t.Nb[1], t.Nb[2], t.Nb[3])
		}
		fmt.Fprintf(&b, ", \"op\": %q", t.Op.String())
		if n := t.NumSrc(); n > 0 {
			parts := make([]string, n)
			for j := 0; j < n; j++ {
				parts[j] = "null"
				if s := t.Src[j]; s != nil {
					k, ok := id[s]
					if !ok {
						return fmt.Errorf("write graph: tensor %q: source %q is not in the file: %w", t.Name, s.Name, ErrGraph)
					}
					parts[j] = strconv.Itoa(k)
				}
			}
			b.WriteString(", \"src\": [" + strings.Join(parts, ", ") + "]")
		}
		if t.ViewSrc != nil {
			k, ok := id[t.ViewSrc]
			if !ok {
				return fmt.Errorf("write graph: view %q: base %q is not in the file: %w", t.Name, t.ViewSrc.Name, ErrGraph)
			}
			fmt.Fprintf(&b, ", \"view_src\": %d, \"view_offs\": %d", k, t.ViewOffs)
		}
		if t.Flags != 0 {
			var fl []string
			for _, fn := range flagNames {
				if t.Flags&fn.f != 0 {
					fl = append(fl, strconv.Quote(fn.name))
				}
			}
			b.WriteString(", \"flags\": [" + strings.Join(fl, ", ") + "]")
		}
		if t.Preallocated {
			b.WriteString(", \"preallocated\": true")
		}
		b.WriteString("}" + sep(i, len(f.Tensors)))
	}
	b.WriteString("  ],\n")
	ids := func(ts []*Tensor) (string, error) {
		out := make([]int, len(ts))
		for i, t := range ts {
			k, ok := id[t]
			if !ok {
				return "", fmt.Errorf("write graph: graph tensor %q is not in the file: %w", t.Name, ErrGraph)
			}
			out[i] = k
		}
		return intList(out), nil
	}
	leafs, err := ids(f.Graph.Leafs())
	if err != nil {
		return err
	}
	nodes, err := ids(f.Graph.Nodes())
	if err != nil {
		return err
	}
	b.WriteString("  \"leafs\": " + leafs + ",\n  \"nodes\": " + nodes)
	if f.LeafBufferIDs != nil {
		b.WriteString(",\n  \"leaf_buffer_ids\": " + intList(f.LeafBufferIDs))
	}
	if f.NodeBufferIDs != nil {
		b.WriteString(",\n  \"node_buffer_ids\": " + intList(f.NodeBufferIDs))
	}
	b.WriteString("\n}\n")
	_, err = w.Write(b.Bytes())
	return err
}

func sep(i, n int) string {
	if i < n-1 {
		return ",\n"
	}
	return "\n"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func intList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func int64List(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// VirtualBufferType is a buffer type described only by its parameters, as
// graph files give them. It plans without a device: its buffers hold no
// memory (byte access is ErrUnsupported) and have a fixed fake base.
type VirtualBufferType struct {
	TypeName string
	Align    uint64
	Max      uint64 // NoMaxSize for unlimited
	AllocPad uint64 // alloc size is NBytes rounded up to a multiple (<= 1: none)
}

// Name returns the type's name.
func (v *VirtualBufferType) Name() string { return v.TypeName }

// Alignment returns the type's alignment.
func (v *VirtualBufferType) Alignment() uint64 { return v.Align }

// MaxSize returns the type's max buffer size.
func (v *VirtualBufferType) MaxSize() uint64 { return v.Max }

// AllocSize is NBytes padded to AllocPad.
func (v *VirtualBufferType) AllocSize(t *Tensor) uint64 { return PadTo(t.NBytes(), v.AllocPad) }

// IsHost reports false: virtual buffers hold no bytes.
func (v *VirtualBufferType) IsHost() bool { return false }

// AllocBuffer returns a buffer without memory of the given size.
func (v *VirtualBufferType) AllocBuffer(size uint64) (Buffer, error) {
	return &virtualBuffer{bt: v, size: size}, nil
}

// virtualFakeBase is the base address of virtual buffers: non-zero and
// aligned for any power of two up to 2^40.
const virtualFakeBase = 1 << 40

type virtualBuffer struct {
	bt    *VirtualBufferType
	size  uint64
	usage BufferUsage
	freed bool
}

func (b *virtualBuffer) Type() BufferType       { return b.bt }
func (b *virtualBuffer) Base() uint64           { return virtualFakeBase }
func (b *virtualBuffer) Size() uint64           { return b.size }
func (b *virtualBuffer) Usage() BufferUsage     { return b.usage }
func (b *virtualBuffer) SetUsage(u BufferUsage) { b.usage = u }
func (b *virtualBuffer) Reset()                 {}
func (b *virtualBuffer) InitTensor(*Tensor) error {
	if b.freed {
		return ErrFreed
	}
	return nil
}
func (b *virtualBuffer) noBytes() error {
	if b.freed {
		return ErrFreed
	}
	return fmt.Errorf("virtual buffer of %s holds no bytes: %w", b.bt.TypeName, ErrUnsupported)
}
func (b *virtualBuffer) MemsetTensor(*Tensor, byte, uint64, uint64) error { return b.noBytes() }
func (b *virtualBuffer) SetTensor(*Tensor, []byte, uint64) error          { return b.noBytes() }
func (b *virtualBuffer) GetTensor(*Tensor, []byte, uint64) error          { return b.noBytes() }
func (b *virtualBuffer) CopyTensor(*Tensor, *Tensor) (bool, error)        { return false, b.noBytes() }
func (b *virtualBuffer) Clear(byte) error                                 { return b.noBytes() }
func (b *virtualBuffer) Free() error {
	if b.freed {
		return ErrFreed
	}
	b.freed = true
	return nil
}
