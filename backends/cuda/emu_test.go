package cuda

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/backends/backendtest"
	"github.com/gogml/gogml/backends/cpu"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	kcuda "github.com/gogml/gogml/internal/kernels/cuda"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// This file runs the backend against an emulated driver: the kernels'
// CUDA C compiled for the host (internal/kernels/cuda/emu) in a helper process that
// shares the "device memory" arena with the test at the same addresses.
// It checks, without a GPU, the Go dispatch, the argument packing against
// the C parameter types, and the kernels' results against the CPU backend.

const emuArenaSize = 1 << 30

// emuBinary builds the emulator with g++ (cached by source hash) or skips.
func emuBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("emulated kernels: skipped in -short mode")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("emulated kernels: no g++")
	}
	h := sha256.New()
	var files []string
	_ = fs.WalkDir(kcuda.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		b, _ := kcuda.Sources.ReadFile(f)
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "gogml-cuda-emu")
	bin := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	src := t.TempDir()
	for _, f := range files {
		b, _ := kcuda.Sources.ReadFile(f)
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=c++17", "-O1", "-Wno-unknown-pragmas", "-DGOGML_EMU"}
	for _, f := range files {
		if strings.HasSuffix(f, ".cu") {
			args = append(args, "-x", "c++", filepath.Join(src, f))
		}
	}
	tmp := bin + ".tmp" + fmt.Sprint(os.Getpid())
	args = append(args, "-x", "none", filepath.Join(src, "emu", "emu_main.cpp"), "-o", tmp)
	out, err := exec.Command(gxx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("building the kernel emulator: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// emuSpan is an allocation's arena offsets [off, end).
type emuSpan struct{ off, end uint64 }

// emuDevice is the emulated GPU: an arena of "device memory" mapped in
// this process and in the emulator process at the same address.
type emuDevice struct {
	arena []byte
	base  uint64

	mu sync.Mutex
	// live holds the allocations in address order; used is their bytes.
	live  []emuSpan
	used  uint64
	funcs []string
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
}

func newEmuDevice(t testing.TB) *emuDevice {
	t.Helper()
	bin := emuBinary(t)
	// The helper maps the arena at the address it has here; that address
	// can be taken in the helper's own address space, so try a few arenas.
	for try := 0; ; try++ {
		e, err := startEmuDevice(t, bin)
		if err == nil {
			return e
		}
		if try == 4 {
			t.Fatal(err)
		}
		t.Logf("emulator: %v; retrying with another arena", err)
	}
}

func startEmuDevice(t testing.TB, bin string) (*emuDevice, error) {
	f, err := os.CreateTemp("", "gogml-emu-arena")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer os.Remove(f.Name()) // both sides hold their mapping
	if err := f.Truncate(emuArenaSize); err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, emuArenaSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	e := &emuDevice{arena: mem, base: uint64(uintptr(unsafe.Pointer(&mem[0])))}
	e.cmd = exec.Command(bin, f.Name(), fmt.Sprintf("%x", e.base), fmt.Sprint(emuArenaSize))
	e.cmd.Stderr = os.Stderr
	fail := func(err error) (*emuDevice, error) {
		if e.cmd.Process != nil {
			_ = e.cmd.Process.Kill()
			_ = e.cmd.Wait()
		}
		_ = unix.Munmap(mem)
		return nil, err
	}
	if e.in, err = e.cmd.StdinPipe(); err != nil {
		return fail(err)
	}
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	e.out = bufio.NewReader(stdout)
	if err := e.cmd.Start(); err != nil {
		return fail(err)
	}
	if line, err := e.out.ReadString('\n'); err != nil || line != "ready\n" {
		return fail(fmt.Errorf("helper did not map the arena at %#x (%q, %v)", e.base, line, err))
	}
	t.Cleanup(func() {
		e.in.Close()
		_ = e.cmd.Wait()
		_ = unix.Munmap(mem)
	})
	return e, nil
}

// span returns the arena bytes at device address p, or nil when they lie
// outside the arena.
func (e *emuDevice) span(p, n uint64) []byte {
	if p < e.base || p-e.base > emuArenaSize || n > emuArenaSize-(p-e.base) {
		return nil
	}
	return e.arena[p-e.base : p-e.base+n]
}

// alloc places n bytes first-fit in the gaps between the live
// allocations, 256-aligned: a long-lived allocation (the backend's own
// scratch) must not stop the rest of the arena being reused, as it did
// with a bump pointer once an RPC server kept the device for thousands of
// test-backend-ops cases.
func (e *emuDevice) alloc(n uint64) (uint64, Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n > emuArenaSize {
		return 0, resultOutOfMemory
	}
	off := uint64(4096)
	i := 0
	for ; i < len(e.live); i++ {
		if e.live[i].off >= off+n {
			break
		}
		off = (e.live[i].end + 255) &^ 255
	}
	if off+n > emuArenaSize {
		return 0, resultOutOfMemory
	}
	e.live = append(e.live, emuSpan{})
	copy(e.live[i+1:], e.live[i:])
	e.live[i] = emuSpan{off, off + n}
	e.used += n
	return e.base + off, resultSuccess
}

func (e *emuDevice) free(p uint64) Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := sort.Search(len(e.live), func(i int) bool { return e.base+e.live[i].off >= p })
	if i == len(e.live) || e.base+e.live[i].off != p {
		return resultInvalidValue
	}
	e.used -= e.live[i].end - e.live[i].off
	e.live = append(e.live[:i], e.live[i+1:]...)
	return resultSuccess
}

func (e *emuDevice) copyIn(dst uint64, src unsafe.Pointer, n uint64) Result {
	d := e.span(dst, n)
	if d == nil {
		return resultIllegalAddress
	}
	if n > 0 {
		copy(d, unsafe.Slice((*byte)(src), n))
	}
	return resultSuccess
}

func (e *emuDevice) copyOut(dst unsafe.Pointer, src uint64, n uint64) Result {
	s := e.span(src, n)
	if s == nil {
		return resultIllegalAddress
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), n), s)
	}
	return resultSuccess
}

// launch forwards a kernel launch with packed arguments to the emulator.
func (e *emuDevice) launch(f cuFunction, gx, gy, gz, bx, by, bz, shmem uint32, extra unsafe.Pointer) Result {
	if extra == nil || f == 0 || int(f) > len(e.funcs) {
		return resultInvalidValue
	}
	if err := checkLaunchLimits(gx, gy, gz, bx, by, bz, shmem); err != nil {
		// A real GPU refuses such a launch (CUDA_ERROR_INVALID_VALUE);
		// the emulator would run it, so refuse it here.
		fmt.Fprintf(os.Stderr, "emulator: %s: %v\n", e.funcs[f-1], err)
		return resultInvalidValue
	}
	words := unsafe.Slice((*uint64)(extra), 5)
	argp := unsafe.Add(extra, scratchArgs-scratchExtra)
	sizep := unsafe.Add(extra, scratchSize-scratchExtra)
	if words[0] != launchParamBufferPointer || words[1] != uint64(uintptr(argp)) ||
		words[2] != launchParamBufferSize || words[3] != uint64(uintptr(sizep)) || words[4] != launchParamEnd {
		return resultInvalidValue
	}
	n := *(*uint64)(sizep)
	buf := unsafe.Slice((*byte)(argp), n)
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.in, "L %s %d %d %d %d %d %d %d %s\n", e.funcs[f-1], gx, gy, gz, bx, by, bz, shmem, hex.EncodeToString(buf))
	line, err := e.out.ReadString('\n')
	if err != nil || line != "ok\n" {
		fmt.Fprintf(os.Stderr, "emulator: %q %v\n", line, err)
		return resultUnknown
	}
	return resultSuccess
}

// emuDriver binds the driver entry points to the emulated device.
func emuDriver(e *emuDevice) *driver {
	ok := resultSuccess
	d := &driver{}
	d.cuInit = func(uint32) Result { return ok }
	d.cuDriverGetVersion = func(v *int32) Result { *v = 12000; return ok }
	d.cuDeviceGetCount = func(n *int32) Result { *n = 1; return ok }
	d.cuDeviceGet = func(dev *int32, i int32) Result {
		if i != 0 {
			return resultInvalidDevice
		}
		*dev = 0
		return ok
	}
	d.cuDeviceGetName = func(name *byte, n int32, dev int32) Result {
		copy(unsafe.Slice(name, n), "gogml kernel emulator\x00")
		return ok
	}
	d.cuDeviceGetAttribute = func(v *int32, attr int32, dev int32) Result {
		switch attr {
		case attrUnifiedAddressing, attrMultiprocessorCount:
			*v = 1
		case attrComputeCapabilityMajor:
			*v = 7
		default:
			*v = 0
		}
		return ok
	}
	d.cuDeviceTotalMem = func(b *uint64, dev int32) Result { *b = emuArenaSize; return ok }
	d.cuDevicePrimaryCtxRetain = func(c *cuContext, dev int32) Result { *c = 1; return ok }
	d.cuDevicePrimaryCtxRelease = func(int32) Result { return ok }
	d.cuCtxSetCurrent = func(cuContext) Result { return ok }
	d.cuCtxSynchronize = func() Result { return ok }
	d.cuMemAlloc = func(p *uint64, n uint64) Result {
		var r Result
		*p, r = e.alloc(n)
		return r
	}
	d.cuMemFree = e.free
	d.cuMemGetInfo = func(free, total *uint64) Result {
		e.mu.Lock()
		*free, *total = emuArenaSize-4096-e.used, emuArenaSize
		e.mu.Unlock()
		return ok
	}
	d.cuMemsetD8 = func(p uint64, v uint8, n uint64) Result {
		s := e.span(p, n)
		if s == nil {
			return resultIllegalAddress
		}
		for i := range s {
			s[i] = v
		}
		return ok
	}
	d.cuMemsetD8Async = func(p uint64, v uint8, n uint64, _ cuStream) Result { return d.cuMemsetD8(p, v, n) }
	d.cuMemcpyHtoD = e.copyIn
	d.cuMemcpyDtoH = e.copyOut
	d.cuMemcpyDtoD = func(dst, src, n uint64) Result {
		a, b := e.span(dst, n), e.span(src, n)
		if a == nil || b == nil {
			return resultIllegalAddress
		}
		copy(a, b)
		return ok
	}
	d.cuMemcpyHtoDAsync = func(dst uint64, src unsafe.Pointer, n uint64, _ cuStream) Result { return e.copyIn(dst, src, n) }
	d.cuMemcpyDtoHAsync = func(dst unsafe.Pointer, src uint64, n uint64, _ cuStream) Result { return e.copyOut(dst, src, n) }
	d.cuMemcpyDtoDAsync = func(dst, src, n uint64, _ cuStream) Result { return d.cuMemcpyDtoD(dst, src, n) }
	d.cuMemHostAlloc = func(p *unsafe.Pointer, n uint64, flags uint32) Result {
		a, r := e.alloc(n)
		if r != ok {
			return r
		}
		*p = unsafe.Pointer(&e.arena[a-e.base])
		return ok
	}
	d.cuMemFreeHost = func(p unsafe.Pointer) Result { return e.free(uint64(uintptr(p))) }
	d.cuModuleLoadDataEx = func(m *cuModule, _ unsafe.Pointer, _ uint32, _, _ unsafe.Pointer) Result { *m = 1; return ok }
	d.cuModuleUnload = func(cuModule) Result { return ok }
	d.cuModuleGetFunction = func(f *cuFunction, m cuModule, name string) Result {
		e.mu.Lock()
		e.funcs = append(e.funcs, name)
		*f = cuFunction(len(e.funcs))
		e.mu.Unlock()
		return ok
	}
	d.cuLaunchKernel = func(f cuFunction, gx, gy, gz, bx, by, bz, shmem uint32, s cuStream, params, extra unsafe.Pointer) Result {
		return e.launch(f, gx, gy, gz, bx, by, bz, shmem, extra)
	}
	d.cuStreamCreate = func(s *cuStream, flags uint32) Result { *s = 1; return ok }
	d.cuStreamSynchronize = func(cuStream) Result { return ok }
	d.cuStreamDestroy = func(cuStream) Result { return ok }
	d.cuEventCreate = func(ev *cuEvent, flags uint32) Result { *ev = 1; return ok }
	d.cuEventRecord = func(cuEvent, cuStream) Result { return ok }
	d.cuEventSynchronize = func(cuEvent) Result { return ok }
	d.cuEventElapsedTime = func(ms *float32, a, b cuEvent) Result { *ms = 0; return ok }
	d.cuEventDestroy = func(cuEvent) Result { return ok }
	d.cuGetErrorName = func(Result, **byte) Result { return resultInvalidValue }
	d.cuGetErrorString = func(Result, **byte) Result { return resultInvalidValue }
	return d
}

func newEmuBackend(t *testing.T) *Backend {
	t.Helper()
	e := newEmuDevice(t)
	b, err := newWithDriver(emuDriver(e), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestEmulatedBuffers runs the shared buffer suite on CUDA0 and CUDA_Host
// of the emulated device.
func TestEmulatedBuffers(t *testing.T) {
	b := newEmuBackend(t)
	plain := cpu.DefaultBufferType()
	t.Run("CUDA0", func(t *testing.T) {
		backendtest.RunBuffers(t, b.DeviceBufferType(), backendtest.WithOther(plain), backendtest.WithOther(b.HostBufferType()), backendtest.WithLargeSize(8<<20))
	})
	t.Run("CUDA_Host", func(t *testing.T) {
		backendtest.RunBuffers(t, b.HostBufferType(), backendtest.WithOther(plain), backendtest.WithLargeSize(8<<20), backendtest.WithoutTooLarge())
	})
}

// TestEmulatedOps runs every op case through the emulated kernels with
// tensors in CUDA0, and every fourth with tensors in CUDA_Host (all with
// GOGML_EMU_ALL=1), and compares with the CPU backend.
func TestEmulatedOps(t *testing.T) {
	b := newEmuBackend(t)
	all := os.Getenv("GOGML_EMU_ALL") == "1"
	t.Run("CUDA0", func(t *testing.T) {
		for _, c := range opCases() {
			t.Run(c.name, func(t *testing.T) { runOpCase(t, b, b.DeviceBufferType(), c) })
		}
	})
	t.Run("CUDA_Host", func(t *testing.T) {
		for i, c := range opCases() {
			if all || i%4 == 0 {
				t.Run(c.name, func(t *testing.T) { runOpCase(t, b, b.HostBufferType(), c) })
			}
		}
	})
}

// TestEmulatedSplit is TestSplitBuffers on the emulated device.
func TestEmulatedSplit(t *testing.T) {
	b := newEmuBackend(t)
	splitBuffers(t, b)
}

// TestEmulatedModel runs the small llama-style decoder on the emulated
// device (q8_0 weights; f32 too with GOGML_EMU_ALL=1) and compares its logits, step by step,
// with the CPU backend's, as model/llama's device test does on a GPU.
func TestEmulatedModel(t *testing.T) {
	be := newEmuBackend(t)
	types := []runtime.Type{runtime.TypeQ8_0} // q8_0 keeps some matrices f32
	if os.Getenv("GOGML_EMU_ALL") == "1" {
		types = append(types, runtime.TypeF32)
	}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := llama.DefaultConfig()
			cfg.Vocab, cfg.Dim, cfg.Heads, cfg.Layers, cfg.FFN, cfg.Ctx = 96, 64, 4, 2, 172, 32
			cfg.WeightType = typ
			w := llama.GenerateWeights(cfg)
			dev, err := llama.New(w, llama.Options{Backend: be})
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			host, err := llama.New(w, llama.Options{Backend: cpu.NewBackend(cpu.BackendOptions{Threads: 2})})
			if err != nil {
				t.Fatal(err)
			}
			defer host.Close()
			var worst float64
			stepBoth(t, host, dev, []int32{1, 2, 3, 4, 5}, 4, cfg.Vocab, func(step int, a, b []float32) {
				for i := range a {
					d := math.Abs(float64(a[i] - b[i]))
					if !(d <= 1e-3) {
						t.Fatalf("step %d logit %d: cpu %g, emulated CUDA %g", step, i, a[i], b[i])
					}
					worst = math.Max(worst, d)
				}
			})
			t.Logf("emulated CUDA vs CPU: max abs diff %.3g", worst)
		})
	}
}

// TestEmulatedGGUF is TestGGUFTypes on the emulated device: every weight
// type with GOGML_EMU_ALL=1 (about 4 minutes), else q5_1 (block sums) and
// q4_K (a k-quant, with grouped-query attention), to keep make test
// short; the op cases cover every type's kernels.
func TestEmulatedGGUF(t *testing.T) {
	types := []runtime.Type{runtime.TypeQ5_1, runtime.TypeQ4_K}
	if os.Getenv("GOGML_EMU_ALL") == "1" {
		types = ggufTypes
	}
	ggufVsCPU(t, newEmuBackend(t), types)
}

func TestEmulatedSupportsBufferType(t *testing.T) {
	b := newEmuBackend(t)
	type wrapped struct{ runtime.BufferType }
	tests := []struct {
		name string
		bt   runtime.BufferType
		want bool
	}{
		{"device", b.DeviceBufferType(), true},
		{"device with max size", b.DeviceBufferType().WithMaxSize(1 << 20), true},
		{"wrapped device", wrapped{b.DeviceBufferType()}, true},
		{"pinned host", b.HostBufferType(), true},
		{"cpu", cpu.DefaultBufferType(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := b.SupportsBufferType(tc.bt); got != tc.want {
				t.Fatalf("SupportsBufferType(%s) = %v, want %v", tc.bt.Name(), got, tc.want)
			}
		})
	}
	// A tensor in CPU memory is refused by Compute with a clear error.
	g, _, _ := buildCase(t, opCases()[0], cpu.DefaultBufferType())
	if err := b.Compute(g); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("Compute on CPU tensors: %v, want runtime.ErrUnsupported", err)
	}
}

// TestEmulatedGetRowsBadIndex checks that an index outside the source is
// an error wrapping runtime.ErrOutOfBounds and that the backend keeps
// working afterwards.
func TestEmulatedGetRowsBadIndex(t *testing.T) { getRowsBadIndex(t, newEmuBackend(t)) }

func getRowsBadIndex(t *testing.T, b *Backend) {
	c := opCase{name: "bad", idx: 10, nmse: 1e-7, build: func(c *runtime.Context) *runtime.Tensor {
		return c.GetRows(c.NewTensor(runtime.TypeF32, 8, 4), c.NewTensor(runtime.TypeI32, 3))
	}}
	g, out, _ := buildCase(t, c, b.DeviceBufferType())
	idx := out.Src[1]
	bad := []byte{1, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0} // 1, 7, 2: 7 is out of range
	if err := runtime.SetTensorData(idx, bad, 0); err != nil {
		t.Fatal(err)
	}
	err := b.Compute(g)
	if !errors.Is(err, runtime.ErrOutOfBounds) || !strings.Contains(err.Error(), "7") {
		t.Fatalf("Compute = %v, want an out-of-bounds error naming index 7", err)
	}
	good := []byte{1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0}
	if err := runtime.SetTensorData(idx, good, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(g); err != nil {
		t.Fatalf("Compute after the bad index: %v", err)
	}
}

// TestEmulatedBackendtest runs the shared op suite (backendtest.RunOps:
// every case of every op the backend claims, against the reference
// kernels, with guard bytes and in-place aliasing) on the emulated
// device; the reduced table unless GOGML_EMU_ALL=1.
func TestEmulatedBackendtest(t *testing.T) {
	b := newEmuBackend(t)
	var opts []backendtest.OpOption
	if os.Getenv("GOGML_EMU_ALL") != "1" {
		opts = append(opts, backendtest.Reduced())
	}
	backendtest.RunOps(t, b, opts...)
}

// TestEmulatedQuantStoreBytes checks that CPY and SET_ROWS into block
// types (k_cpy_quant, k_set_rows_quant) write the bytes ggml's CPU
// backend writes: cpukernels.FromFloatCPU of the same rows, byte for
// byte, ties included (the values are multiples of 1/64, so x·id lands
// on halves).
func TestEmulatedQuantStoreBytes(t *testing.T) {
	b := newEmuBackend(t)
	const ne0, rows = 96, 5
	for typ := range quantStoreTypes {
		for _, op := range []string{"cpy", "set_rows"} {
			t.Run(fmt.Sprintf("%s_%s", op, typ), func(t *testing.T) {
				c := opCase{name: op, idx: rows, build: func(c *runtime.Context) *runtime.Tensor {
					src := c.NewTensor(runtime.TypeF32, ne0, rows)
					if op == "cpy" {
						return c.Cpy(src, c.NewTensor(typ, ne0, rows))
					}
					return c.SetRows(c.NewTensor(typ, ne0, rows), src, c.NewTensor(runtime.TypeI32, rows))
				}}
				g, out, _ := buildCase(t, c, b.DeviceBufferType())
				rng := rand.New(rand.NewPCG(3, uint64(typ)))
				vals := make([]float32, ne0*rows)
				for i := range vals {
					vals[i] = float32(rng.IntN(257)-128) / 64
				}
				src := out.Src[0] // CPY's source, and SET_ROWS' (ggml's order: rows, ids, destination)
				perm := []int32{3, 0, 4, 1, 2}
				if op == "set_rows" {
					idx := make([]byte, 4*rows)
					for i, r := range perm {
						binary.LittleEndian.PutUint32(idx[4*i:], uint32(r))
					}
					if err := runtime.SetTensorData(out.Src[1], idx, 0); err != nil {
						t.Fatal(err)
					}
				}
				raw := make([]byte, 4*len(vals))
				for i, v := range vals {
					binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
				}
				if err := runtime.SetTensorData(src, raw, 0); err != nil {
					t.Fatal(err)
				}
				if err := b.Compute(g); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, out.NBytes())
				if err := runtime.GetTensorData(out, got, 0); err != nil {
					t.Fatal(err)
				}
				rs := int(typ.RowSize(ne0))
				for r := 0; r < rows; r++ {
					dr := r
					if op == "set_rows" {
						dr = int(perm[r])
					}
					want := make([]byte, rs)
					if err := cpukernels.FromFloatCPU(typ, vals[r*ne0:(r+1)*ne0], want); err != nil {
						t.Fatal(err)
					}
					if g := got[dr*rs : (dr+1)*rs]; !bytes.Equal(g, want) {
						t.Fatalf("row %d (result row %d):\n got %x\nwant %x", r, dr, g, want)
					}
				}
			})
		}
	}
}
