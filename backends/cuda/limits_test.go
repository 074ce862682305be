package cuda

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// Launch limits of every GPU the PTX targets (compute 7.0 and later).
const (
	limitGridX     = 1<<31 - 1
	limitGridYZ    = 65535
	limitBlock     = 1024
	limitBlockZ    = 64
	limitSharedMem = 48 << 10 // per block, without the opt-in attribute
)

// checkLaunchLimits reports a launch shape that a real driver refuses with
// CUDA_ERROR_INVALID_VALUE, which neither the emulator nor the CPU would
// notice.
func checkLaunchLimits(gx, gy, gz, bx, by, bz, shmem uint32) error {
	switch {
	case gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0:
		return fmt.Errorf("zero dimension: grid %d,%d,%d block %d,%d,%d", gx, gy, gz, bx, by, bz)
	case gx > limitGridX || gy > limitGridYZ || gz > limitGridYZ:
		return fmt.Errorf("grid %d,%d,%d beyond %d,%d,%d", gx, gy, gz, limitGridX, limitGridYZ, limitGridYZ)
	case bx > limitBlock || by > limitBlock || bz > limitBlockZ || uint64(bx)*uint64(by)*uint64(bz) > limitBlock:
		return fmt.Errorf("block %d,%d,%d beyond %d threads", bx, by, bz, limitBlock)
	case shmem > limitSharedMem:
		return fmt.Errorf("%d bytes of dynamic shared memory, at most %d", shmem, limitSharedMem)
	}
	return nil
}

// shapeDriver is a driver without memory or kernels: allocations hand out
// addresses in a huge virtual range and launches are only recorded, so
// that graphs over tensors far beyond this machine's memory can be
// "computed" to check each launch's shape against the GPU's limits.
type shapeDriver struct {
	mu       sync.Mutex
	next     uint64
	funcs    []string
	launches []string
	bad      []string
}

const shapeDriverMemory = 1 << 44 // 16 TiB of address space

func (s *shapeDriver) driver() *driver {
	ok := resultSuccess
	d := &driver{}
	d.cuInit = func(uint32) Result { return ok }
	d.cuDriverGetVersion = func(v *int32) Result { *v = 12000; return ok }
	d.cuDeviceGetCount = func(n *int32) Result { *n = 1; return ok }
	d.cuDeviceGet = func(dev *int32, i int32) Result { *dev = 0; return ok }
	d.cuDeviceGetName = func(name *byte, n int32, dev int32) Result {
		copy(unsafe.Slice(name, n), "shape checker\x00")
		return ok
	}
	d.cuDeviceGetAttribute = func(v *int32, attr int32, dev int32) Result {
		*v = 0
		if attr == attrUnifiedAddressing {
			*v = 1
		}
		return ok
	}
	d.cuDeviceTotalMem = func(b *uint64, dev int32) Result { *b = shapeDriverMemory; return ok }
	d.cuDevicePrimaryCtxRetain = func(c *cuContext, dev int32) Result { *c = 1; return ok }
	d.cuDevicePrimaryCtxRelease = func(int32) Result { return ok }
	d.cuCtxSetCurrent = func(cuContext) Result { return ok }
	d.cuCtxSynchronize = func() Result { return ok }
	d.cuMemAlloc = func(p *uint64, n uint64) Result {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next == 0 {
			s.next = 1 << 40
		}
		s.next = (s.next + 255) &^ 255
		*p = s.next
		s.next += n
		return ok
	}
	d.cuMemFree = func(uint64) Result { return ok }
	d.cuMemGetInfo = func(free, total *uint64) Result { *free, *total = shapeDriverMemory, shapeDriverMemory; return ok }
	d.cuMemsetD8 = func(uint64, uint8, uint64) Result { return ok }
	d.cuMemsetD8Async = func(uint64, uint8, uint64, cuStream) Result { return ok }
	d.cuMemcpyHtoD = func(uint64, unsafe.Pointer, uint64) Result { return ok }
	d.cuMemcpyDtoH = func(dst unsafe.Pointer, _ uint64, n uint64) Result {
		clear(unsafe.Slice((*byte)(dst), n))
		return ok
	}
	d.cuMemcpyDtoD = func(uint64, uint64, uint64) Result { return ok }
	d.cuModuleLoadDataEx = func(m *cuModule, _ unsafe.Pointer, _ uint32, _, _ unsafe.Pointer) Result { *m = 1; return ok }
	d.cuModuleUnload = func(cuModule) Result { return ok }
	d.cuModuleGetFunction = func(f *cuFunction, m cuModule, name string) Result {
		s.mu.Lock()
		s.funcs = append(s.funcs, name)
		*f = cuFunction(len(s.funcs))
		s.mu.Unlock()
		return ok
	}
	d.cuLaunchKernel = func(f cuFunction, gx, gy, gz, bx, by, bz, shmem uint32, _ cuStream, params, extra unsafe.Pointer) Result {
		s.mu.Lock()
		defer s.mu.Unlock()
		l := fmt.Sprintf("%s grid %d,%d,%d block %d,%d,%d shmem %d", s.funcs[f-1], gx, gy, gz, bx, by, bz, shmem)
		s.launches = append(s.launches, l)
		if err := checkLaunchLimits(gx, gy, gz, bx, by, bz, shmem); err != nil {
			s.bad = append(s.bad, l+": "+err.Error())
			return resultInvalidValue
		}
		return ok
	}
	d.cuStreamCreate = func(st *cuStream, flags uint32) Result { *st = 1; return ok }
	d.cuStreamSynchronize = func(cuStream) Result { return ok }
	d.cuStreamDestroy = func(cuStream) Result { return ok }
	return d
}

// TestLaunchShapesLargeTensors computes graphs over tensors of more than
// 2^31 elements and more than 65535 rows (as fit an H200's 141 GB) through
// a recording driver, and checks that every launch the backend makes is
// within the grid, block and shared-memory limits of a real GPU.
func TestLaunchShapesLargeTensors(t *testing.T) {
	const (
		f32 = runtime.TypeF32
		f16 = runtime.TypeF16
		q8  = runtime.TypeQ8_0
	)
	cases := []struct {
		name  string
		build func(c *runtime.Context) *runtime.Tensor
	}{
		{"add_many_rows", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor(f32, 16, 1<<27), c.NewTensor(f32, 16, 1))
		}},
		{"add_long_row", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor(f32, 1<<32+7), c.NewTensor(f32, 1<<32+7))
		}},
		{"add_4d", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor(f32, 128, 70000, 300, 2), c.NewTensor(f32, 128, 1, 300, 1))
		}},
		{"scale", func(c *runtime.Context) *runtime.Tensor { return c.Scale(c.NewTensor(f32, 4, 1<<30), 2) }},
		{"cpy_f16", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor(f32, 64, 1<<26), c.NewTensor(f16, 64, 1<<26))
		}},
		{"repeat", func(c *runtime.Context) *runtime.Tensor {
			return c.Repeat(c.NewTensor(f32, 64, 1), c.NewTensor(f32, 64, 1<<26))
		}},
		{"sum_rows", func(c *runtime.Context) *runtime.Tensor { return c.SumRows(c.NewTensor(f32, 8, 1<<28)) }},
		{"rms_norm", func(c *runtime.Context) *runtime.Tensor { return c.RMSNorm(c.NewTensor(f32, 4096, 1<<20), 1e-5) }},
		{"soft_max", func(c *runtime.Context) *runtime.Tensor { return c.SoftMax(c.NewTensor(f32, 32, 1<<27)) }},
		{"get_rows", func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(c.NewTensor(q8, 4096, 1<<20), c.NewTensor(runtime.TypeI32, 1<<20))
		}},
		{"mul_mat_vec", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor(q8, 4096, 1<<22), c.NewTensor(f32, 4096, 1))
		}},
		{"mul_mat_many_rows", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor(f32, 64, 1<<23), c.NewTensor(f32, 64, 4000))
		}},
		{"mul_mat_many_cols", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor(q8, 64, 64), c.NewTensor(f32, 64, 64*65535))
		}},
		{"mul_mat_batched", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor(f16, 64, 128, 60000), c.NewTensor(f32, 64, 2, 60000))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sd := &shapeDriver{}
			b, err := newWithDriver(sd.driver(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx := runtime.NewContext()
			out := tc.build(ctx)
			if ctx.Err() != nil {
				t.Fatal(ctx.Err())
			}
			if !b.SupportsOp(out) {
				t.Fatalf("%s not supported", out)
			}
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(out); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, b.DeviceBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			err = b.Compute(g)
			for _, l := range sd.launches {
				t.Log(l)
			}
			for _, bad := range sd.bad {
				t.Error(bad)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sd.launches) == 0 {
				t.Fatal("no kernel launched")
			}
		})
	}
}

// TestMisalignedViewRefused checks that a node whose f32 operand is a view
// at an offset that is not a multiple of 4 is refused with an error
// (wrapping runtime.ErrUnsupported) before any launch: on a GPU the
// kernel would fault with a sticky CUDA_ERROR_MISALIGNED_ADDRESS.
func TestMisalignedViewRefused(t *testing.T) {
	cases := []struct {
		name string
		view func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor
		ok   bool
	}{
		{"aligned", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.View1D(a, 16, 8) }, true},
		{"offset2", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.View1D(a, 16, 2) }, false},
		{"stride6", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.View2D(a, 2, 4, 6, 0) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sd := &shapeDriver{}
			b, err := newWithDriver(sd.driver(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx := runtime.NewContext()
			a := ctx.NewTensor(runtime.TypeF32, 64)
			out := ctx.Scale(tc.view(ctx, a), 2)
			if ctx.Err() != nil {
				t.Fatal(ctx.Err())
			}
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(out); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, b.DeviceBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			err = b.Compute(g)
			if tc.ok {
				if err != nil || len(sd.launches) != 1 {
					t.Fatalf("Compute: %v, %d launches", err, len(sd.launches))
				}
				return
			}
			if !errors.Is(err, runtime.ErrUnsupported) {
				t.Fatalf("Compute: %v, want an error matching runtime.ErrUnsupported", err)
			}
			if len(sd.launches) != 0 {
				t.Fatalf("launched %v", sd.launches)
			}
			t.Logf("refused: %v", err)
		})
	}
}
