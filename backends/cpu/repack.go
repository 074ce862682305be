package cpu

// This file holds the repacking buffer type: host memory in which the
// q4_0 and q4_K weight matrices are stored with every four rows
// interleaved (vec.Interleave4), and the q8_0 ones rearranged by four rows
// (vec.Interleave4Q8_0), for the decode dots that read four rows as one
// sequential stream (vec.DotQ4_0RowsRepacked, DotQ4_KRowsRepacked,
// DotQ8_0RowsRepacked).
// It is gogml's counterpart of ggml's CPU "extra" buffer type: weights are
// placed in it by gallocr like in any other, SetTensor repacks them and
// GetTensor gives back ggml's layout, and only this backend's MUL_MAT
// reads them (any other use is an error). See RATIONALE.md, "q4_0 and
// q4_K weights repacked for decode".

import (
	"fmt"

	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// RepackBufferType allocates host buffers whose q4_0, q4_K and q8_0
// matrices (Repacked) are stored interleaved by fours. It is immutable and
// safe for concurrent use.
type RepackBufferType struct {
	host *BufferType
}

var _ runtime.BufferType = (*RepackBufferType)(nil)

// NewRepackBufferType returns the repacking buffer type, or false where
// the interleaved kernels do not run (below AVX-512 VNNI): there the
// plain layout is the faster one.
func NewRepackBufferType() (*RepackBufferType, bool) {
	if !vec.RepackedDots(false) || !vec.RepackedDots(true) {
		return nil, false
	}
	return &RepackBufferType{host: &BufferType{name: "CPU_REPACK", align: repackAlignment, maxSize: runtime.NoMaxSize, hugePages: true}}, true
}

// repackAlignment is the tensor offset alignment of a RepackBuffer: a
// cache line, so that a repacked q8_0 matrix's chunks (a multiple of 64
// bytes) are whole lines, which its decode dot loads whole (one thread
// read 28 GB/s from aligned chunks, 22-23 from chunks 32 bytes off:
// RATIONALE.md, "q8_0 weights repacked for decode").
const repackAlignment = 64

// Name returns "CPU_REPACK".
func (bt *RepackBufferType) Name() string { return bt.host.name }

// Alignment returns the tensor offset alignment (64 bytes).
func (bt *RepackBufferType) Alignment() uint64 { return bt.host.align }

// MaxSize returns runtime.NoMaxSize.
func (bt *RepackBufferType) MaxSize() uint64 { return runtime.NoMaxSize }

// AllocSize returns t.NBytes(): repacking keeps a matrix's size.
func (bt *RepackBufferType) AllocSize(t *runtime.Tensor) uint64 { return t.NBytes() }

// IsHost reports false: the bytes are host memory, but not in ggml's
// layout, so no one but this backend may read them in place.
func (bt *RepackBufferType) IsHost() bool { return false }

// AllocBuffer returns a new repacking buffer of size bytes.
func (bt *RepackBufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	b, err := bt.host.Alloc(size)
	if err != nil {
		return nil, err
	}
	return &RepackBuffer{bt: bt, buf: b}, nil
}

// RepackBuffer is one allocation of a RepackBufferType. Free may run
// concurrently with the other methods, as Buffer's.
type RepackBuffer struct {
	bt  *RepackBufferType
	buf *Buffer
}

// Repacked reports whether t's bytes are stored interleaved in a
// RepackBuffer: a contiguous q4_0 matrix with rows of a multiple of 128
// elements, a q8_0 one with rows of a multiple of 256, or a q4_K one, of
// at least four rows and one matrix (2-D).
func Repacked(t *runtime.Tensor) bool {
	if _, ok := t.Buffer.(*RepackBuffer); !ok {
		return false
	}
	return repackUnit(t) > 0
}

// Repackable reports whether a RepackBuffer stores t repacked (then
// Repacked(t) once it is placed there): t's layout, not its place.
func Repackable(t *runtime.Tensor) bool { return repackUnit(t) > 0 }

// Belongs reports whether t is a weight matrix a loader should place in a
// RepackBuffer: one it stores repacked (Repackable), or another q8_0
// matrix of at least four rows, which it keeps in ggml's layout but in its
// huge-page memory, where the decode dots read it steadier than from a
// file mapping's 4 KiB pages (llama.cpp's CPU backend moves its q8_0
// weights into its repacking buffer too). See RATIONALE.md, "q8_0
// weights in the repacking buffer's memory".
func Belongs(t *runtime.Tensor) bool {
	if Repackable(t) {
		return true
	}
	return t.Type == runtime.TypeQ8_0 && t.Ne[1] >= 4 && t.Ne[2] == 1 && t.Ne[3] == 1 && t.IsContiguous() && t.ViewSrc == nil
}

// repackUnit is the interleaving unit of t's rows (vec.RepackUnit), 0 when
// t is not a matrix that is repacked.
func repackUnit(t *runtime.Tensor) int {
	// The type first: the CPU backend asks for every node's sources, and
	// an f32 activation then costs no shape checks.
	if t.Type != runtime.TypeQ4_0 && t.Type != runtime.TypeQ4_K && t.Type != runtime.TypeQ8_0 {
		return 0
	}
	if t.Ne[1] < 4 || t.Ne[2] != 1 || t.Ne[3] != 1 || !t.IsContiguous() || t.ViewSrc != nil {
		return 0
	}
	switch t.Type {
	case runtime.TypeQ4_0:
		return vec.RepackUnit(false, int(t.Ne[0]/vec.QK))
	case runtime.TypeQ4_K:
		if t.Ne[0]%vec.QKK == 0 {
			return vec.RepackUnit(true, int(t.Ne[0]/vec.QKK))
		}
	case runtime.TypeQ8_0:
		return vec.RepackUnitQ8_0(int(t.Ne[0] / vec.QK))
	}
	return 0
}

// interleave writes rows rows of t (rowSize bytes, interleaving unit
// unit) from src to dst repacked, or, with undo, back in ggml's layout:
// q8_0's rearrangement (vec.Interleave4Q8_0) or the others' interleaving
// (vec.Interleave4).
func interleave(t *runtime.Tensor, dst, src []byte, rowSize, unit, rows int, undo bool) error {
	switch {
	case t.Type == runtime.TypeQ8_0 && undo:
		return vec.Deinterleave4Q8_0(dst, src, rowSize, rows)
	case t.Type == runtime.TypeQ8_0:
		return vec.Interleave4Q8_0(dst, src, rowSize, rows)
	case undo:
		return vec.Deinterleave4(dst, src, rowSize, unit, rows)
	}
	return vec.Interleave4(dst, src, rowSize, unit, rows)
}

// Type returns the buffer's type.
func (b *RepackBuffer) Type() runtime.BufferType { return b.bt }

// Base returns the address of byte 0.
func (b *RepackBuffer) Base() uint64 { return b.buf.Base() }

// Size returns the buffer's size in bytes.
func (b *RepackBuffer) Size() uint64 { return b.buf.Size() }

// Usage returns the usage hint.
func (b *RepackBuffer) Usage() runtime.BufferUsage { return b.buf.Usage() }

// SetUsage sets the usage hint.
func (b *RepackBuffer) SetUsage(u runtime.BufferUsage) { b.buf.SetUsage(u) }

// InitTensor checks that t is placed inside the buffer.
func (b *RepackBuffer) InitTensor(t *runtime.Tensor) error {
	b.buf.mu.RLock()
	defer b.buf.mu.RUnlock()
	if b.buf.freed {
		return b.buf.errFreed("init tensor")
	}
	_, err := runtime.CheckBufferRange(b, t, 0, t.NBytes())
	return err
}

// MemsetTensor fills size bytes of t from offset with value (one byte
// value everywhere is the same bytes repacked or not).
func (b *RepackBuffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	return b.access(t, offset, size, "memset", func(mem []byte) { Fill(mem, value) })
}

// SetTensor copies src into t's bytes from offset (in ggml's layout),
// repacking a Repacked tensor's rows as they arrive: any range may be set,
// the four-row groups it cuts are completed from what the buffer holds.
func (b *RepackBuffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	t, offset = viewBase(t, offset)
	if unit := repackUnit(t); unit > 0 && offset%(4*t.Nb[1]) == 0 && (uint64(len(src))%(4*t.Nb[1]) == 0 || offset+uint64(len(src)) == t.NBytes()) {
		// Whole groups (and the plain tail): repacked straight from src.
		return b.access(t, offset, uint64(len(src)), "set tensor", func(mem []byte) {
			_ = interleave(t, mem, src, int(t.Nb[1]), unit, len(src)/int(t.Nb[1]), false)
		})
	}
	return b.rows(t, offset, uint64(len(src)), "set tensor", func(mem []byte) { copy(mem, src) },
		func(plain []byte, at uint64) { copy(plain[at:], src) })
}

// GetTensor copies t's bytes from offset, in ggml's layout, into dst.
func (b *RepackBuffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	t, offset = viewBase(t, offset)
	return b.rows(t, offset, uint64(len(dst)), "get tensor", func(mem []byte) { copy(dst, mem) },
		func(plain []byte, at uint64) { copy(dst, plain[at:]) })
}

// viewBase resolves a view of a Repacked tensor (its bytes at offset) to
// the tensor itself and the same bytes' offset in it; any other tensor is
// returned as it is.
func viewBase(t *runtime.Tensor, offset uint64) (*runtime.Tensor, uint64) {
	if v := t.ViewSrc; v != nil && Repacked(v) && t.Offset >= v.Offset {
		return v, offset + (t.Offset - v.Offset)
	}
	return t, offset
}

// readsRepacked reports whether t's bytes are (part of) a Repacked
// tensor's: the tensor or a view of it.
func readsRepacked(t *runtime.Tensor) bool {
	return Repacked(t) || (t.ViewSrc != nil && Repacked(t.ViewSrc))
}

// access runs f on t's bytes [offset, offset+size) in the buffer, under
// the buffer's read lock.
func (b *RepackBuffer) access(t *runtime.Tensor, offset, size uint64, what string, f func(mem []byte)) error {
	b.buf.mu.RLock()
	defer b.buf.mu.RUnlock()
	if b.buf.freed {
		return b.buf.errFreed(what)
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil {
		return err
	}
	f(b.buf.mem[pos : pos+size])
	return nil
}

// rows runs a set or get of t's bytes [offset, offset+size): plain on the
// bytes themselves when t is not repacked, else group on the plain copy of
// the four-row groups the range covers (at: the range's start in it),
// which a set then repacks back.
func (b *RepackBuffer) rows(t *runtime.Tensor, offset, size uint64, what string, plain func(mem []byte), group func(plain []byte, at uint64)) error {
	unit := 0
	if Repacked(t) {
		unit = repackUnit(t)
	}
	if unit == 0 || size == 0 {
		return b.access(t, offset, size, what, plain)
	}
	rs, rows := t.Nb[1], uint64(t.Ne[1])
	g0, g1 := offset/(4*rs)*4, min((offset+size+4*rs-1)/(4*rs)*4, rows)
	set := what == "set tensor"
	return b.access(t, g0*rs, (g1-g0)*rs, what, func(mem []byte) {
		tmp := make([]byte, len(mem))
		// Rows past the last full group are plain: Deinterleave4 copies them.
		_ = interleave(t, tmp, mem, int(rs), unit, int(g1-g0), true)
		group(tmp, offset-g0*rs)
		if set {
			_ = interleave(t, mem, tmp, int(rs), unit, int(g1-g0), false)
		}
	})
}

// CopyTensor reports false: copies go through GetTensor and SetTensor,
// which convert the layout.
func (b *RepackBuffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) { return false, nil }

// Clear fills the whole buffer with value.
func (b *RepackBuffer) Clear(value byte) error { return b.buf.Clear(value) }

// Reset does nothing.
func (b *RepackBuffer) Reset() {}

// Free unmaps the memory; freeing twice is an error wrapping
// runtime.ErrFreed.
func (b *RepackBuffer) Free() error { return b.buf.Free() }

// checkRepackedSources fails node n when a source other than a MUL_MAT's
// weights is a Repacked tensor or a view of one, or n itself is: nothing
// else reads or writes the interleaved rows.
func checkRepackedSources(n *runtime.Tensor) error {
	if readsRepacked(n) {
		return fmt.Errorf("tensor %s: result in repacked weights (%s): %w", n, n.Buffer.Type().Name(), runtime.ErrUnsupported)
	}
	for i, s := range n.Src {
		if s != nil && readsRepacked(s) && (n.Op != runtime.OpMulMat || i != 0 || !Repacked(s)) {
			return fmt.Errorf("tensor %s: source %d (%s) is repacked in %s, which only MUL_MAT weights may be: %w", n, i, s.Name, s.Buffer.Type().Name(), runtime.ErrUnsupported)
		}
	}
	return nil
}

// plainRows returns rows j0..j0+nj of the repacked matrix a (bytes am) in
// ggml's layout, in worker ith's scratch (j0 a multiple of 4).
func (p *scratchPool) plainRows(ith int, a *runtime.Tensor, am []byte, j0, nj int64) []byte {
	rs := int64(a.Nb[1])
	n := int(nj * rs)
	if len(p.plain[ith]) < n {
		p.plain[ith] = make([]byte, n)
	}
	dst := p.plain[ith][:n]
	_ = interleave(a, dst, am[j0*rs:(j0+nj)*rs], int(rs), repackUnit(a), int(nj), true)
	return dst
}
