package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

func TestDriverErrorMatchesSentinels(t *testing.T) {
	tests := []struct {
		code   Result
		target error
		want   bool
	}{
		{resultOutOfMemory, ErrOutOfMemory, true},
		{resultOutOfMemory, runtime.ErrOutOfMemory, true},
		{resultNoDevice, ErrNoDevice, true},
		{resultInvalidDevice, ErrNoDevice, true},
		{resultInvalidValue, ErrOutOfMemory, false},
		{resultIllegalAddress, ErrNoDevice, false},
		{resultIllegalAddress, ErrContextLost, true},
		{resultMisaligned, ErrContextLost, true},
		{resultLaunchFailed, ErrContextLost, true},
		{resultOutOfMemory, ErrContextLost, false},
		{resultLaunchOutOfRes, ErrContextLost, false},
	}
	for _, tc := range tests {
		t.Run(resultName(tc.code), func(t *testing.T) {
			var d *driver // no driver: the fallback names are used
			err := d.check("cuTest", tc.code)
			if got := errors.Is(err, tc.target); got != tc.want {
				t.Fatalf("errors.Is(%v, %v) = %v, want %v", err, tc.target, got, tc.want)
			}
			if !strings.Contains(err.Error(), resultName(tc.code)) || !strings.Contains(err.Error(), "cuTest") {
				t.Fatalf("error %q lacks the call or the code's name", err)
			}
		})
	}
	if err := (*driver)(nil).check("cuTest", resultSuccess); err != nil {
		t.Fatalf("success gave %v", err)
	}
	if !errors.Is(ErrOutOfMemory, runtime.ErrOutOfMemory) {
		t.Fatal("ErrOutOfMemory does not wrap runtime.ErrOutOfMemory")
	}
}

func TestResultNameUnknown(t *testing.T) {
	if got := resultName(12345); got != "CUresult(12345)" {
		t.Fatalf("resultName = %q", got)
	}
}

// TestNewWithoutDevice checks that New fails cleanly, with an error that
// matches a sentinel, on machines without a usable driver or device.
func TestNewWithoutDevice(t *testing.T) {
	b, err := New(0)
	if err == nil {
		_ = b.Close()
		t.Skip("a CUDA device is present")
	}
	if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) {
		t.Fatalf("New(0) = %v, want an error matching ErrNoDriver or ErrNoDevice", err)
	}
	t.Logf("New(0): %v", err)
	if _, err := New(1 << 20); err == nil || (!errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice)) {
		t.Fatalf("New(huge) = %v", err)
	}
	if _, err := DeviceCount(); err == nil {
		t.Log("DeviceCount works: a driver is installed")
	}
}

func TestDeviceAllocSize(t *testing.T) {
	ctx := runtime.NewContext()
	tests := []struct {
		name string
		t    *runtime.Tensor
		want uint64
	}{
		{"f32 not padded", ctx.NewTensor(runtime.TypeF32, 100, 3), 1200},
		{"q4_0 512 wide", ctx.NewTensor(runtime.TypeQ4_0, 512, 2), 2 * 16 * 18},
		{"q4_0 64 wide", ctx.NewTensor(runtime.TypeQ4_0, 64, 2), 2*2*18 + 14*18},
		{"q8_0 4096+32 wide", ctx.NewTensor(runtime.TypeQ8_0, 4128, 1), 129*34 + 15*34},
		{"f16 odd", ctx.NewTensor(runtime.TypeF16, 7), 14},
	}
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := deviceAllocSize(tc.t); got != tc.want {
				t.Fatalf("alloc size = %d, want %d (nbytes %d)", got, tc.want, tc.t.NBytes())
			}
			if deviceAllocSize(tc.t) < tc.t.NBytes() {
				t.Fatal("alloc size below nbytes")
			}
		})
	}
}

func TestLaunchGeometry(t *testing.T) {
	tests := []struct {
		ne0, rows int64
		grid      dim3
	}{
		{1, 1, dim3{1, 1, 1}},
		{256, 1, dim3{1, 1, 1}},
		{257, 3, dim3{2, 3, 1}},
		{1 << 26, 1 << 20, dim3{65535, 65535, 1}},
	}
	for _, tc := range tests {
		g, b := rowsGrid(tc.ne0, tc.rows)
		if g != tc.grid || b != (dim3{blockThreads, 1, 1}) {
			t.Errorf("rowsGrid(%d, %d) = %v %v, want %v", tc.ne0, tc.rows, g, b, tc.grid)
		}
	}
	for _, c := range []struct {
		ne0  int64
		want uint32
	}{{1, 32}, {32, 32}, {33, 64}, {4096, 1024}, {1000, 1024}} {
		if got := reduceBlock(c.ne0); got != c.want {
			t.Errorf("reduceBlock(%d) = %d, want %d", c.ne0, got, c.want)
		}
	}
}

// TestRopeCorrDimsMatchesReference checks that the rope launch on the
// emulated device passes the CPU reference's YaRN range (kernel arguments
// lo and hi).
func TestRopeCorrDimsMatchesReference(t *testing.T) {
	// Byte offsets of k_rope's arguments 19 (lo) and 20 (hi).
	var layout args
	offs := make([]int, len(kRope.args))
	for i, k := range kRope.args {
		layout.put(k) // pads to the argument's alignment, then appends it
		offs[i] = len(layout.buf) - k.size()
	}
	e := newEmuDevice(t)
	d := emuDriver(e)
	var last []byte
	launch := d.cuLaunchKernel
	d.cuLaunchKernel = func(f cuFunction, gx, gy, gz, bx, by, bz, shmem uint32, s cuStream, params, extra unsafe.Pointer) Result {
		// The packed arguments and their size sit in the scratch that
		// extra starts (see Backend.launch).
		n := *(*uint64)(unsafe.Add(extra, scratchSize-scratchExtra))
		last = append(last[:0], unsafe.Slice((*byte)(unsafe.Add(extra, scratchArgs-scratchExtra)), n)...)
		return launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
	}
	b, err := newWithDriver(d, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []struct {
		nDims, nCtx int32
		base        float32
	}{{128, 4096, 10000}, {64, 2048, 500000}, {128, 0, 10000}} {
		p := runtime.RopeParams{NCtxOrig: c.nCtx, FreqBase: c.base, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
		g, _, buf := buildCase(t, opCase{idx: 100, build: func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.RopeExt(ctx.NewTensor(runtime.TypeF32, int64(c.nDims), 2, 3), ctx.NewTensor(runtime.TypeI32, 3), nil, int(c.nDims), runtime.RopeNormal, p)
		}}, b.DeviceBufferType())
		last = nil
		if err := b.Compute(g); err != nil {
			t.Fatal(err)
		}
		_ = buf.Free()
		if len(last) < offs[20]+4 {
			t.Fatalf("%+v: no rope launch seen (%d argument bytes)", c, len(last))
		}
		lo := math.Float32frombits(binary.LittleEndian.Uint32(last[offs[19]:]))
		hi := math.Float32frombits(binary.LittleEndian.Uint32(last[offs[20]:]))
		wlo, whi := cpukernels.RopeCorrDims(c.nDims, c.nCtx, c.base, 32, 1)
		if lo != wlo || hi != whi {
			t.Errorf("%+v: got %v %v, want %v %v", c, lo, hi, wlo, whi)
		}
	}
}

func TestLoadDriverMissingLibrary(t *testing.T) {
	tests := []struct{ name, lib string }{
		{"absent", "libgogml-no-such-driver.so.1"},
		{"lacks entry points", "libc.so.6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadDriverFrom(tc.lib)
			if err == nil {
				_ = d.close()
				t.Fatalf("loading %s succeeded", tc.lib)
			}
			if !errors.Is(err, ErrNoDriver) {
				t.Fatalf("error %v does not match ErrNoDriver", err)
			}
		})
	}
}
