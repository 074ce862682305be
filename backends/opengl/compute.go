//go:build opengl

package opengl

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	"github.com/go-gl/gl/v4.3-core/gl"
	"github.com/gogml/gogml/internal/kernels/glsl"
	"github.com/gogml/gogml/runtime"
)

// SupportsOp reports whether Compute has a kernel for node t with its
// sources' types and layouts.
func (b *Backend) SupportsOp(t *runtime.Tensor) bool {
	_, err := b.plan(t)
	return err == nil
}

// plan is the package's plan of node t plus the device limit on
// bindings: every tensor the dispatch reads or writes must fit in one
// shader storage block from its offset rounded down to the binding
// alignment (bindRange), wherever the allocator places it.
func (b *Backend) plan(t *runtime.Tensor) (*launch, error) {
	l, err := plan(t)
	if err != nil || l == nil {
		return l, err
	}
	blocks := numSlots + 1
	for i, s := range l.binds {
		if s != nil {
			blocks = numSlots + 2 + i
		}
	}
	if blocks > b.dev.info.MaxComputeSSBOs {
		return nil, fmt.Errorf("opengl: tensor %s: its kernel needs %d shader storage blocks, the device has %d: %w", t, blocks, b.dev.info.MaxComputeSSBOs, runtime.ErrUnsupported)
	}
	for _, s := range append(append([]*runtime.Tensor{t}, l.binds[:]...), l.srcs[:]...) {
		if s != nil && s.NBytes()+b.bt.align+4 > b.bt.block {
			return nil, fmt.Errorf("opengl: tensor %s spans %d bytes, more than one %d-byte shader storage block: %w", s, s.NBytes(), b.bt.block, runtime.ErrUnsupported)
		}
	}
	return l, nil
}

// binding is a buffer range bound to one shader storage block.
type binding struct {
	id        uint32
	off, size uint64 // the range; size 0 binds the whole buffer
}

// bindRange returns the binding of tensor t in gb and the bytes to
// subtract from t's offset in the kernel's parameters. A buffer within
// one block is bound whole (offsets unchanged); a larger one from t's
// offset rounded down to the alignment, as far as one block (or the
// buffer's end) reaches.
func (b *Backend) bindRange(gb *buffer, t *runtime.Tensor) (binding, uint64, error) {
	bt := b.bt
	if gb.size <= bt.block {
		return binding{id: gb.id}, 0, nil
	}
	base := t.Offset &^ (bt.align - 1)
	end := min(runtime.AlignUp(gb.size, 4), base+bt.block)
	if t.Offset+t.NBytes() > end {
		return binding{}, 0, fmt.Errorf("opengl: tensor %s at offset %d spans %d bytes, past the %d-byte shader storage block bound from %d: %w",
			t, t.Offset, t.NBytes(), bt.block, base, runtime.ErrUnsupported)
	}
	return binding{id: gb.id, off: base, size: end - base}, base, nil
}

// step is one prepared dispatch.
type step struct {
	node    *runtime.Tensor
	kernel  string
	defines []string
	params  [numParams]uint32
	bufs    [numSlots]binding
	binds   [numBinds]binding // bindings 5.. (launch.binds); id 0 if none
	groups  uint64
	status  bool
}

// variant is the program cache key (kernel name and defines) and the
// defines.
func (l *launch) variant() (string, []string) {
	defs := l.defines
	if l.dense {
		defs = append([]string{"DENSE"}, defs...)
	}
	key := l.kernel
	for _, d := range defs {
		key += "+" + d
	}
	return key, defs
}

// glBuffer returns the GL buffer of tensor t, checking that it belongs to
// this device and that t's bytes lie inside it.
func (b *Backend) glBuffer(t *runtime.Tensor) (*buffer, error) {
	if t.Buffer == nil {
		return nil, fmt.Errorf("opengl: tensor %s: %w", t, runtime.ErrNotAllocated)
	}
	gb, ok := t.Buffer.(*buffer)
	if !ok {
		return nil, fmt.Errorf("opengl: tensor %s is in a %s buffer, not one of this backend's %s buffers: %w", t, t.Buffer.Type().Name(), b.bt.name, runtime.ErrUnsupported)
	}
	if gb.bt.dev != b.dev {
		return nil, fmt.Errorf("opengl: tensor %s is in a buffer of another OpenGL backend (%s, a context of its own%s), not of this %s backend: a GL buffer belongs to the backend that allocated it: %w",
			t, gb.bt.name, gb.bt.dev.state(), b.bt.name, runtime.ErrUnsupported)
	}
	if err := gb.live(); err != nil {
		return nil, err
	}
	if _, err := runtime.CheckBufferRange(gb, t, 0, t.NBytes()); err != nil {
		return nil, err
	}
	if es := min(t.Type.Size(), 4); t.Type.BlockSize() == 1 && t.Offset%es != 0 {
		return nil, fmt.Errorf("opengl: tensor %s at offset %d not aligned to its %d-byte elements: %w", t, t.Offset, es, runtime.ErrAlignment)
	}
	return gb, nil
}

// prepare checks every node of g and builds its dispatch.
func (b *Backend) prepare(g *runtime.Graph) ([]step, error) {
	var steps []step
	for _, n := range g.Nodes() {
		l, err := b.plan(n)
		if err != nil {
			return nil, err
		}
		if l == nil {
			continue
		}
		st := step{node: n, params: l.params(n), groups: l.groups(n), status: l.status}
		st.kernel, st.defines = l.variant()
		// bind places tensor x at slot i (its descriptor's offset word,
		// or, for bindings 5.., extra word l.bindOff[i-numSlots]).
		bind := func(x *runtime.Tensor, i int) (binding, error) {
			gb, err := b.glBuffer(x)
			if err != nil {
				return binding{}, err
			}
			bd, base, err := b.bindRange(gb, x)
			if err != nil {
				return binding{}, err
			}
			if i >= numSlots {
				st.params[extraBase+l.bindOff[i-numSlots]] -= uint32(base)
			} else {
				st.params[i*slotWords+1] -= uint32(base)
			}
			return bd, nil
		}
		db, err := bind(n, 0)
		if err != nil {
			return nil, err
		}
		for i := range st.bufs {
			st.bufs[i] = db
		}
		for i, s := range l.srcs {
			if s == nil {
				continue
			}
			if st.bufs[i+1], err = bind(s, i+1); err != nil {
				return nil, fmt.Errorf("node %s: source: %w", n, err)
			}
		}
		for i, s := range l.binds {
			if s == nil {
				continue
			}
			if st.binds[i], err = bind(s, numSlots+i); err != nil {
				return nil, fmt.Errorf("node %s: source: %w", n, err)
			}
		}
		if st.groups == 0 {
			continue
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// Compute runs g's nodes in order on the GL thread: one dispatch per node
// with a shader-storage barrier between nodes, then a fence wait.
func (b *Backend) Compute(g *runtime.Graph) error {
	if g == nil {
		return fmt.Errorf("opengl: nil graph: %w", runtime.ErrGraph)
	}
	steps, err := b.prepare(g)
	if err != nil {
		return err
	}
	if len(steps) == 0 {
		return nil
	}
	d := b.dev
	return d.call(func() error {
		if err := d.onThread(); err != nil {
			return err
		}
		status := false
		for i := range steps {
			st := &steps[i]
			p, err := d.program(st.kernel, st.defines)
			if err != nil {
				return err
			}
			if st.status && !status {
				if err := d.resetStatus(); err != nil {
					return err
				}
				status = true
			}
			gl.UseProgram(p.id)
			if p.params >= 0 {
				gl.Uniform1uiv(p.params, numParams, &st.params[0])
			}
			for k, bd := range st.bufs {
				bd.bind(uint32(k))
			}
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, numSlots, d.status)
			for k, bd := range st.binds {
				if bd.id == 0 {
					bd = st.bufs[0]
				}
				bd.bind(uint32(numSlots + 1 + k))
			}
			x, y := d.split(st.groups)
			gl.DispatchCompute(x, y, 1)
			gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
		}
		gl.MemoryBarrier(gl.ALL_BARRIER_BITS)
		gl.UseProgram(0)
		if err := glErrors(); err != nil {
			return err
		}
		if err := d.finish(); err != nil {
			return err
		}
		if status {
			return d.checkStatus(steps)
		}
		return nil
	})
}

// bind binds the range to shader storage binding point k (GL thread).
func (bd binding) bind(k uint32) {
	if bd.size == 0 {
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, k, bd.id)
		return
	}
	gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, k, bd.id, int(bd.off), int(bd.size))
}

// split spreads n work groups over x and y within the device's limits.
func (d *device) split(n uint64) (x, y uint32) {
	mx := d.info.MaxWorkGroupCount[0]
	if mx == 0 || mx > 1<<31-1 {
		mx = 65535
	}
	if n <= mx {
		return uint32(n), 1
	}
	return uint32(mx), uint32((n + mx - 1) / mx)
}

// program returns the program of variant key (kernel name plus defines),
// compiling it on first use. It runs on the GL thread.
func (d *device) program(key string, defines []string) (*program, error) {
	if p, ok := d.programs[key]; ok {
		return p, nil
	}
	name, _, _ := strings.Cut(key, "+")
	src, err := glsl.Source(name, defines...)
	if err != nil {
		return nil, err
	}
	p, err := compile(key, src)
	if err != nil {
		return nil, err
	}
	d.programs[key] = p
	return p, nil
}

// resetStatus creates (once) and zeroes the status buffer.
func (d *device) resetStatus() error {
	if d.status == 0 {
		gl.GenBuffers(1, &d.status)
		gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, d.status)
		gl.BufferStorage(gl.SHADER_STORAGE_BUFFER, 16, nil, gl.DYNAMIC_STORAGE_BIT)
		gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	}
	var zero [16]byte
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, d.status)
	gl.BufferSubData(gl.SHADER_STORAGE_BUFFER, 0, 16, unsafe.Pointer(&zero[0]))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	return glErrors()
}

// checkStatus reads the status word that kernels raise on bad data.
func (d *device) checkStatus(steps []step) error {
	var st [16]byte
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, d.status)
	gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 0, 16, unsafe.Pointer(&st[0]))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	if binary.LittleEndian.Uint32(st[0:]) == 0 {
		return nil
	}
	idx := int32(binary.LittleEndian.Uint32(st[4:]))
	for _, s := range steps {
		if s.status {
			return fmt.Errorf("opengl: %s %s (or a later row op in the graph): row index %d out of range: %w", s.node.Op, s.node, idx, runtime.ErrOutOfBounds)
		}
	}
	return fmt.Errorf("opengl: row index %d out of range: %w", idx, runtime.ErrOutOfBounds)
}
