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
	_, err := plan(t)
	return err == nil
}

// step is one prepared dispatch.
type step struct {
	node    *runtime.Tensor
	kernel  string
	defines []string
	params  [numParams]uint32
	bufs    [numSlots]uint32
	bind5   uint32 // buffer at binding 5 (launch.bind5), 0 if none
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
		l, err := plan(n)
		if err != nil {
			return nil, err
		}
		if l == nil {
			continue
		}
		st := step{node: n, params: l.params(n), groups: l.groups(n), status: l.status}
		st.kernel, st.defines = l.variant()
		db, err := b.glBuffer(n)
		if err != nil {
			return nil, err
		}
		for i := range st.bufs {
			st.bufs[i] = db.id
		}
		for i, s := range l.srcs {
			if s == nil {
				continue
			}
			sb, err := b.glBuffer(s)
			if err != nil {
				return nil, fmt.Errorf("node %s: source: %w", n, err)
			}
			st.bufs[i+1] = sb.id
		}
		if l.bind5 != nil {
			mb, err := b.glBuffer(l.bind5)
			if err != nil {
				return nil, fmt.Errorf("node %s: source: %w", n, err)
			}
			st.bind5 = mb.id
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
			for k, id := range st.bufs {
				gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, uint32(k), id)
			}
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, numSlots, d.status)
			if st.bind5 != 0 {
				gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, numSlots+1, st.bind5)
			} else {
				gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, numSlots+1, st.bufs[0])
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
