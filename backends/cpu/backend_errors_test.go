package cpu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// fakeBuffer is a buffer that is not host memory.
type fakeBuffer struct{ runtime.Buffer }

type fakeType struct{ runtime.BufferType }

func (fakeType) Name() string                         { return "FAKE" }
func (fakeType) IsHost() bool                         { return false }
func (f fakeBuffer) Type() runtime.BufferType         { return fakeType{} }
func (f fakeBuffer) InitTensor(*runtime.Tensor) error { return nil }

func TestBackendErrors(t *testing.T) {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	bt := be.DefaultBufferType()
	tests := []struct {
		name     string
		setup    func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor
		sentinel error
		names    string
	}{
		{"unplaced result", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 8)
			a.Name = "x"
			mustAlloc(t, buf, a, 0)
			r := c.Sqr(a)
			r.Name = "sq"
			return r
		}, runtime.ErrNotAllocated, `"sq"`},
		{"unplaced source", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 8)
			a.Name = "lost"
			r := c.Sqr(a)
			mustAlloc(t, buf, r, 0)
			return r
		}, runtime.ErrNotAllocated, `"lost"`},
		{"unsupported type", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeI32, 8)
			mustAlloc(t, buf, a, 0)
			r := c.Sqr(a)
			r.Name = "isq"
			mustAlloc(t, buf, r, 64)
			return r
		}, runtime.ErrUnsupported, `"isq"`},
		{"unsupported op", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 8)
			mustAlloc(t, buf, a, 0)
			r := c.NewOp(runtime.OpDsv4HcComb, runtime.TypeI32, a.Ne, a)
			r.Name = "sorted"
			mustAlloc(t, buf, r, 64)
			return r
		}, runtime.ErrUnsupported, `"sorted"`},
		{"unsupported unary", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 8)
			mustAlloc(t, buf, a, 0)
			r := c.NewOp(runtime.OpUnary, runtime.TypeF32, a.Ne, a)
			r.SetOpParamI32(0, int32(runtime.UnaryCount)) // no such function
			r.Name = "hs"
			mustAlloc(t, buf, r, 64)
			return r
		}, runtime.ErrUnsupported, `"hs"`},
		{"not host memory", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 8)
			a.Name = "remote"
			a.Buffer = fakeBuffer{buf}
			r := c.Sqr(a)
			mustAlloc(t, buf, r, 0)
			return r
		}, runtime.ErrUnsupported, `"remote"`},
		{"row index out of range", func(c *runtime.Context, buf runtime.Buffer) *runtime.Tensor {
			a := c.NewTensor(runtime.TypeF32, 4, 3)
			ids := c.NewTensor(runtime.TypeI32, 2)
			ids.Name = "ids"
			mustAlloc(t, buf, a, 0)
			mustAlloc(t, buf, ids, 64)
			if err := runtime.SetTensorData(ids, []byte{1, 0, 0, 0, 7, 0, 0, 0}, 0); err != nil {
				t.Fatal(err)
			}
			r := c.GetRows(a, ids)
			r.Name = "rows"
			mustAlloc(t, buf, r, 128)
			return r
		}, runtime.ErrOutOfBounds, `"ids"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf, err := bt.AllocBuffer(4096)
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			c := runtime.NewContext()
			out := tc.setup(c, buf)
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(out); err != nil {
				t.Fatal(err)
			}
			err = be.Compute(g)
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("got %v, want an error wrapping %v naming %s", err, tc.sentinel, tc.names)
			}
		})
	}
	if be.SupportsOp(runtime.NewContext().NewTensor(runtime.TypeF32, 4)) != true {
		t.Error("a leaf (op NONE) should be supported")
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if err := be.Compute(runtime.NewGraph()); !errors.Is(err, cpu.ErrClosed) {
		t.Errorf("compute after close: %v", err)
	}
	if be.SupportsBufferType(fakeType{}) || !be.SupportsBufferType(bt) {
		t.Error("SupportsBufferType")
	}
	if d := be.Device(); d.Name != "CPU" || d.TotalMemory == 0 {
		t.Errorf("device %+v", d)
	}
}

func mustAlloc(t *testing.T, buf runtime.Buffer, x *runtime.Tensor, off uint64) {
	t.Helper()
	if err := runtime.TensorAlloc(buf, x, off); err != nil {
		t.Fatal(err)
	}
}
