package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// TestDriverABI loads a stand-in libcuda (testdata/fakecuda.c, built with
// the C compiler; skipped without one) through the real purego binding and
// checks what the C side receives: sizes above 32 bits, the memset byte,
// copied host bytes, kernel names, all eleven cuLaunchKernel arguments
// (five of them passed on the stack on x86-64) and the packed argument
// buffer behind the "extra" array, and the driver's error names. The
// emulated driver of the other tests is Go and cannot see C ABI mistakes.
func TestDriverABI(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the stand-in library is built for Linux")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	if _, err := os.Stat("testdata/fakecuda.c"); err != nil {
		t.Skip("no testdata/fakecuda.c (test binary run outside its package)")
	}
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, "testdata/fakecuda.c").CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in driver: %v\n%s", err, out)
	}
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	defer purego.Dlclose(h)
	var fakeGet func(rec *[16]uint64, args *[4096]byte, n *uint64)
	purego.RegisterLibFunc(&fakeGet, h, "fake_get")
	var rec [16]uint64
	var argbuf [4096]byte
	var nargs uint64
	last := func() { fakeGet(&rec, &argbuf, &nargs) }

	drv, err := loadDriverFrom(lib)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newWithDriver(drv, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()

	t.Run("device", func(t *testing.T) {
		info := b.Device()
		if !strings.Contains(info.Description, "Fake H200") || !strings.Contains(info.Description, "compute 9.0, 132 SMs") {
			t.Errorf("description %q", info.Description)
		}
		if info.TotalMemory != 141<<30+3 || info.FreeMemory != 100<<30 || b.dev.total != 141<<30+3 {
			t.Errorf("memory %+v, total %d", info, b.dev.total)
		}
	})

	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, 300, 3)
	y := ctx.Scale(x, 2.5)
	z := ctx.SoftMax(x)
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	buf, err := gallocr.AllocCtxTensors(ctx, b.DeviceBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	last()
	if rec[0] != 1 || rec[1] != buf.Size() {
		t.Errorf("cuMemAlloc_v2 got size %d (call %d), want %d", rec[1], rec[0], buf.Size())
	}

	t.Run("memset", func(t *testing.T) {
		if err := x.Buffer.MemsetTensor(x, 0xAB, 12, 40); err != nil {
			t.Fatal(err)
		}
		last()
		if rec[0] != 3 || rec[1] != buf.Base()+x.Offset+12 || rec[2] != 0xAB || rec[3] != 40 {
			t.Errorf("cuMemsetD8_v2 got %x", rec[:4])
		}
	})
	t.Run("copy", func(t *testing.T) {
		src := []byte("0123456789abcdef")
		if err := runtime.SetTensorData(x, src, 8); err != nil {
			t.Fatal(err)
		}
		last()
		if rec[0] != 5 || rec[1] != buf.Base()+x.Offset+8 || rec[2] != 16 || string(argbuf[:16]) != string(src) {
			t.Errorf("cuMemcpyHtoD_v2 got %x %q", rec[:3], argbuf[:16])
		}
	})
	t.Run("launch", func(t *testing.T) {
		for _, tc := range []struct {
			out   *runtime.Tensor
			name  string
			grid  [3]uint64
			block [3]uint64
			shmem uint64
			src   int // offset of the source pointer
		}{
			{y, "k_unary", [3]uint64{2, 3, 1}, [3]uint64{256, 1, 1}, 0, 80},
			{z, "k_soft_max_f32", [3]uint64{3, 1, 1}, [3]uint64{512, 1, 1}, 2048, 72},
		} {
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(tc.out); err != nil {
				t.Fatal(err)
			}
			if err := b.Compute(g); err != nil {
				t.Fatal(err)
			}
			last()
			if rec[0] != 12 || rec[1] != 0xF0000000+uint64(len(tc.name)) {
				t.Errorf("%s: call %d, function %#x", tc.name, rec[0], rec[1])
			}
			if [3]uint64(rec[2:5]) != tc.grid || [3]uint64(rec[5:8]) != tc.block || rec[8] != tc.shmem {
				t.Errorf("%s: grid %v block %v shmem %d, want %v %v %d", tc.name, rec[2:5], rec[5:8], rec[8], tc.grid, tc.block, tc.shmem)
			}
			if rec[9] != 0x5700 || rec[10] != 0 || rec[11] == 0 {
				t.Errorf("%s: stream %#x params %#x extra %#x", tc.name, rec[9], rec[10], rec[11])
			}
			le := binary.LittleEndian
			a := argbuf[:nargs]
			// dst pointer, then dst's shape4: ne[0], ne[1] ... nb[0].
			if len(a) < 156 || le.Uint64(a[0:]) != buf.Base()+tc.out.Offset || le.Uint64(a[8:]) != 300 ||
				le.Uint64(a[16:]) != 3 || le.Uint64(a[40:]) != 4 || le.Uint64(a[tc.src:]) != buf.Base()+x.Offset {
				t.Errorf("%s: packed arguments %x", tc.name, a)
			}
			if tc.name == "k_unary" {
				// dst type, then after the source: its type, the code, p0.
				if len(a) != 168 || le.Uint32(a[72:]) != 0 || le.Uint32(a[152:]) != 0 || le.Uint32(a[156:]) != uSqr+5 ||
					math.Float32frombits(le.Uint32(a[160:])) != 2.5 {
					t.Errorf("%s: scalar arguments %x", tc.name, a[144:])
				}
			}
		}
	})
	t.Run("out of memory", func(t *testing.T) {
		_, err := b.DeviceBufferType().AllocBuffer(b.DeviceBufferType().MaxSize())
		var de *DriverError
		if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &de) || de.Name != "FAKE_ERROR_002" || de.Desc != "fake description" {
			t.Fatalf("AllocBuffer(all): %v", err)
		}
	})
	t.Run("events", func(t *testing.T) {
		d, err := b.TimeDevice(func() error { return nil })
		if err != nil || d != 1500*time.Microsecond {
			t.Fatalf("TimeDevice = %v, %v", d, err)
		}
	})
	t.Run("pinned", func(t *testing.T) {
		hb, err := b.HostBufferType().AllocBuffer(4096)
		if err != nil {
			t.Fatal(err)
		}
		last()
		if rec[0] != 11 || rec[1] != 4096 || rec[2] != memHostAllocPortable|memHostAllocDeviceMap {
			t.Errorf("cuMemHostAlloc got %x", rec[:3])
		}
		if p := hb.(runtime.HostBuffer).Bytes(); len(p) != 4096 || uintptr(unsafe.Pointer(&p[0])) != uintptr(hb.Base()) {
			t.Errorf("pinned bytes %d at %#x, base %#x", len(p), uintptr(unsafe.Pointer(&p[0])), hb.Base())
		}
		if err := hb.Free(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("module load logs", func(t *testing.T) {
		if len(b.jitLog) == 0 || !strings.Contains(b.jitLog[0], ".ptx: fake JIT: 0 registers") {
			t.Errorf("info logs of the loaded modules: %q", b.jitLog)
		}
		var loadErr error
		if err := b.dev.do(func() error {
			_, _, loadErr = b.dev.drv.loadModule("bad.ptx", []byte("not ptx"))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		last()
		want := [16]uint64{13, 5, jitInfoLogBuffer, jitInfoLogBufferSizeBytes, jitErrorLogBuffer, jitErrorLogBufferSizeBytes, jitLogVerbose, 0,
			0, jitLogBytes, 0, jitLogBytes, 1}
		if rec != want {
			t.Errorf("cuModuleLoadDataEx got options %v, want %v", rec, want)
		}
		var me *ModuleLoadError
		var de *DriverError
		if !errors.As(loadErr, &me) || !errors.As(loadErr, &de) || de.Code != resultInvalidPTX {
			t.Fatalf("bad image: %v", loadErr)
		}
		if me.ErrorLog != "ptxas fatal: fake JIT found no .entry in the image" || me.InfoLog != "fake JIT: compiling failed" ||
			!strings.Contains(loadErr.Error(), "loading bad.ptx") || !strings.Contains(loadErr.Error(), "JIT error log: ptxas fatal") {
			t.Errorf("bad image error %q (error log %q, info log %q)", loadErr, me.ErrorLog, me.InfoLog)
		}
	})
}
