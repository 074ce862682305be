package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// libName is the driver library loaded at run time. The driver, not the
// CUDA toolkit, provides it; it ships with every NVIDIA driver install.
const libName = "libcuda.so.1"

// Opaque driver handles. They are C pointers the Go side never
// dereferences, kept as uintptr so that the garbage collector ignores them.
type (
	cuContext  uintptr
	cuModule   uintptr
	cuFunction uintptr
	cuStream   uintptr
	cuEvent    uintptr
)

// Device attribute numbers (CUdevice_attribute) the backend reads.
const (
	attrMaxThreadsPerBlock     = 1
	attrMaxGridDimX            = 5
	attrMaxSharedMemPerBlock   = 8
	attrWarpSize               = 10
	attrClockRate              = 13
	attrMultiprocessorCount    = 16
	attrUnifiedAddressing      = 41
	attrMemoryClockRate        = 36
	attrGlobalMemoryBusWidth   = 37
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// cuMemHostAlloc flags.
const (
	memHostAllocPortable  = 0x01
	memHostAllocDeviceMap = 0x02
)

// CUjit_option values passed to cuModuleLoadDataEx: the JIT's info and
// error log buffers (a buffer's size goes in, the bytes written come back
// in the same value slot) and verbose logging.
const (
	jitInfoLogBuffer           = 3
	jitInfoLogBufferSizeBytes  = 4
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
	jitLogVerbose              = 12
)

// cuLaunchKernel "extra" keys: the packed-argument form.
const (
	launchParamEnd           = 0x00
	launchParamBufferPointer = 0x01
	launchParamBufferSize    = 0x02
)

// driver holds the entry points of one loaded libcuda. Its function fields
// are bound once by loadDriver and never change afterwards.
//
// Pointer arguments: out-parameters are Go pointers that the driver writes
// during the call only. Host memory for copies is passed as unsafe.Pointer
// and kept alive by the caller across the call.
type driver struct {
	handle uintptr
	// called is set once cuInit has been called through this binding;
	// from then on the library is never unloaded (see close).
	called bool

	cuInit                    func(flags uint32) Result
	cuDriverGetVersion        func(v *int32) Result
	cuDeviceGetCount          func(n *int32) Result
	cuDeviceGet               func(dev *int32, ordinal int32) Result
	cuDeviceGetName           func(name *byte, n int32, dev int32) Result
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) Result
	cuDeviceTotalMem          func(bytes *uint64, dev int32) Result
	cuDevicePrimaryCtxRetain  func(ctx *cuContext, dev int32) Result
	cuDevicePrimaryCtxRelease func(dev int32) Result
	cuCtxSetCurrent           func(ctx cuContext) Result
	cuCtxSynchronize          func() Result
	cuMemAlloc                func(dptr *uint64, size uint64) Result
	cuMemFree                 func(dptr uint64) Result
	cuMemGetInfo              func(free, total *uint64) Result
	cuMemsetD8                func(dptr uint64, v uint8, n uint64) Result
	cuMemsetD8Async           func(dptr uint64, v uint8, n uint64, s cuStream) Result
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, n uint64) Result
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, n uint64) Result
	cuMemcpyDtoD              func(dst, src uint64, n uint64) Result
	cuMemcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, n uint64, s cuStream) Result
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, n uint64, s cuStream) Result
	cuMemcpyDtoDAsync         func(dst, src uint64, n uint64, s cuStream) Result
	cuMemHostAlloc            func(p *unsafe.Pointer, size uint64, flags uint32) Result
	cuMemFreeHost             func(p unsafe.Pointer) Result
	cuModuleLoadDataEx        func(m *cuModule, image unsafe.Pointer, n uint32, opts, vals unsafe.Pointer) Result
	cuModuleUnload            func(m cuModule) Result
	cuModuleGetFunction       func(f *cuFunction, m cuModule, name string) Result
	cuLaunchKernel            func(f cuFunction, gx, gy, gz, bx, by, bz, shmem uint32, s cuStream, params, extra unsafe.Pointer) Result
	cuStreamCreate            func(s *cuStream, flags uint32) Result
	cuStreamSynchronize       func(s cuStream) Result
	cuStreamDestroy           func(s cuStream) Result
	cuEventCreate             func(e *cuEvent, flags uint32) Result
	cuEventRecord             func(e cuEvent, s cuStream) Result
	cuEventSynchronize        func(e cuEvent) Result
	cuEventElapsedTime        func(ms *float32, start, end cuEvent) Result
	cuEventDestroy            func(e cuEvent) Result
	cuGetErrorName            func(r Result, s **byte) Result
	cuGetErrorString          func(r Result, s **byte) Result
}

// binding names a driver entry point and the field it binds to.
type binding struct {
	sym string
	fn  any // pointer to a func field of driver
}

// bindings lists every entry point with its versioned symbol name. The
// _v2 names are the 64-bit-size variants that cuda.h maps the plain names
// to; binding the plain names would get the legacy 32-bit ABI.
func (d *driver) bindings() []binding {
	return []binding{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuCtxSynchronize", &d.cuCtxSynchronize},
		{"cuMemAlloc_v2", &d.cuMemAlloc},
		{"cuMemFree_v2", &d.cuMemFree},
		{"cuMemGetInfo_v2", &d.cuMemGetInfo},
		{"cuMemsetD8_v2", &d.cuMemsetD8},
		{"cuMemsetD8Async", &d.cuMemsetD8Async},
		{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH},
		{"cuMemcpyDtoD_v2", &d.cuMemcpyDtoD},
		{"cuMemcpyHtoDAsync_v2", &d.cuMemcpyHtoDAsync},
		{"cuMemcpyDtoHAsync_v2", &d.cuMemcpyDtoHAsync},
		{"cuMemcpyDtoDAsync_v2", &d.cuMemcpyDtoDAsync},
		{"cuMemHostAlloc", &d.cuMemHostAlloc},
		{"cuMemFreeHost", &d.cuMemFreeHost},
		{"cuModuleLoadDataEx", &d.cuModuleLoadDataEx},
		{"cuModuleUnload", &d.cuModuleUnload},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuLaunchKernel", &d.cuLaunchKernel},
		{"cuStreamCreate", &d.cuStreamCreate},
		{"cuStreamSynchronize", &d.cuStreamSynchronize},
		{"cuStreamDestroy_v2", &d.cuStreamDestroy},
		{"cuEventCreate", &d.cuEventCreate},
		{"cuEventRecord", &d.cuEventRecord},
		{"cuEventSynchronize", &d.cuEventSynchronize},
		{"cuEventElapsedTime", &d.cuEventElapsedTime},
		{"cuEventDestroy_v2", &d.cuEventDestroy},
		{"cuGetErrorName", &d.cuGetErrorName},
		{"cuGetErrorString", &d.cuGetErrorString},
	}
}

// loadDriver opens libcuda.so.1 and binds every entry point. Errors wrap
// ErrNoDriver. dlopen is reference counted, so loading once per backend is
// cheap and needs no process-wide state.
func loadDriver() (*driver, error) {
	d, err := loadDriverFrom(libName)
	if err == nil {
		return d, nil
	}
	// Where the loader's search path may not reach: WSL's driver folder
	// and the folder container runtimes mount the host driver into.
	for _, p := range libFallbacks {
		if d, ferr := loadDriverFrom(p); ferr == nil {
			return d, nil
		}
	}
	return nil, err
}

// libFallbacks are absolute paths of libcuda tried when the plain name is
// not found.
var libFallbacks = [...]string{
	"/usr/lib/wsl/lib/libcuda.so.1",
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/lib64/nvidia/libcuda.so.1",
}

// loadDriverFrom is loadDriver for a given library file name.
func loadDriverFrom(lib string) (*driver, error) {
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: dlopen %s: %v", ErrNoDriver, lib, err)
	}
	d := &driver{handle: h}
	for _, b := range d.bindings() {
		sym, err := purego.Dlsym(h, b.sym)
		if err != nil {
			_ = purego.Dlclose(h)
			return nil, fmt.Errorf("%w: %s has no %s (driver too old?): %v", ErrNoDriver, lib, b.sym, err)
		}
		purego.RegisterFunc(b.fn, sym)
	}
	return d, nil
}

// close drops this binding's reference to the library, unless cuInit has
// been called through it: libcuda is not marked NODELETE, and once
// initialised it runs threads of its own and keeps process-wide state, so
// the last dlclose would unmap code those threads are running (a crash
// some time later) and a later dlopen would get a second, uninitialised
// copy. An initialised driver therefore stays loaded (dlopen is reference
// counted, so each binding costs only a count).
func (d *driver) close() error {
	if d.handle == 0 || d.called {
		d.handle = 0
		return nil
	}
	err := purego.Dlclose(d.handle)
	d.handle = 0
	return err
}

// cString copies a NUL-terminated C string owned by the driver.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// check turns a CUresult into nil or a *DriverError named by the driver.
func (d *driver) check(fn string, r Result) error {
	if r == resultSuccess {
		return nil
	}
	e := &DriverError{Func: fn, Code: r, Name: resultName(r)}
	if d != nil && d.cuGetErrorName != nil {
		var p *byte
		if d.cuGetErrorName(r, &p) == resultSuccess && p != nil {
			e.Name = cString(p)
		}
		p = nil
		if d.cuGetErrorString(r, &p) == resultSuccess && p != nil {
			e.Desc = cString(p)
		}
	}
	return e
}

// initDriver runs cuInit and classifies its failure: no device is
// ErrNoDevice, anything else (no kernel module, driver/library mismatch)
// is ErrNoDriver.
func (d *driver) initDriver() error {
	d.called = true
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		var de *DriverError
		if errors.As(err, &de) && (de.Code == resultNoDevice) {
			return fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		return fmt.Errorf("%w: %w", ErrNoDriver, err)
	}
	return nil
}

// jitLogBytes is the size of each of the two JIT log buffers.
const jitLogBytes = 16 << 10

// JIT scratch layout: the option numbers (int32), the option values
// (pointer-sized), then the info and the error log buffers.
const (
	jitOpts     = 0
	jitVals     = 64
	jitInfoLog  = 128
	jitErrorLog = jitInfoLog + jitLogBytes
	jitScratch  = jitErrorLog + jitLogBytes
)

// ModuleLoadError is a PTX module the driver refused (invalid or
// unsupported PTX, a driver too old for its ISA version, a JIT failure),
// with what the JIT compiler wrote about it. It unwraps to the
// *DriverError of cuModuleLoadDataEx.
type ModuleLoadError struct {
	Module   string // the embedded PTX file, e.g. "matmul.ptx"
	Err      error  // the *DriverError
	ErrorLog string // the JIT's error log, may be empty
	InfoLog  string // the JIT's info log (verbose), may be empty
}

// Error names the module and the driver error and quotes the JIT logs.
func (e *ModuleLoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cuda: loading %s: %v", e.Module, e.Err)
	if e.ErrorLog != "" {
		fmt.Fprintf(&b, "; JIT error log: %s", e.ErrorLog)
	} else {
		b.WriteString("; the JIT wrote no error log")
	}
	if e.InfoLog != "" {
		fmt.Fprintf(&b, "; JIT info log: %s", e.InfoLog)
	}
	return b.String()
}

// Unwrap returns the driver error.
func (e *ModuleLoadError) Unwrap() error { return e.Err }

// loadModule JIT-compiles one PTX text with cuModuleLoadDataEx, asking
// for the info and error logs. It returns the module and the info log, or
// a *ModuleLoadError carrying both logs. The option arrays and log buffers
// live in an anonymous mapping outside the Go heap: the value array holds
// the buffers' addresses, and the driver writes the logs during the call.
// The caller has the device's context current.
func (d *driver) loadModule(name string, ptx []byte) (cuModule, string, error) {
	mem, err := unix.Mmap(-1, 0, jitScratch, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return 0, "", fmt.Errorf("cuda: loading %s: JIT log buffers: %w", name, err)
	}
	defer unix.Munmap(mem)
	opts := []int32{jitInfoLogBuffer, jitInfoLogBufferSizeBytes, jitErrorLogBuffer, jitErrorLogBufferSizeBytes, jitLogVerbose}
	vals := []uint64{
		uint64(uintptr(unsafe.Pointer(&mem[jitInfoLog]))), jitLogBytes,
		uint64(uintptr(unsafe.Pointer(&mem[jitErrorLog]))), jitLogBytes,
		1,
	}
	for i := range opts {
		binary.NativeEndian.PutUint32(mem[jitOpts+4*i:], uint32(opts[i]))
		binary.NativeEndian.PutUint64(mem[jitVals+8*i:], vals[i])
	}
	// The driver wants a NUL-terminated image, read during the call only.
	img := append(append(make([]byte, 0, len(ptx)+1), ptx...), 0)
	var m cuModule
	r := d.cuModuleLoadDataEx(&m, unsafe.Pointer(&img[0]), uint32(len(opts)), unsafe.Pointer(&mem[jitOpts]), unsafe.Pointer(&mem[jitVals]))
	info := jitLog(mem[jitInfoLog:jitErrorLog], binary.NativeEndian.Uint64(mem[jitVals+8:]))
	if err := d.check("cuModuleLoadDataEx", r); err != nil {
		errLog := jitLog(mem[jitErrorLog:jitScratch], binary.NativeEndian.Uint64(mem[jitVals+24:]))
		return 0, info, &ModuleLoadError{Module: name, Err: err, ErrorLog: errLog, InfoLog: info}
	}
	return m, info, nil
}

// jitLog reads a log buffer the driver filled with n bytes (it reports the
// bytes written in the size slot; the text stops at the first NUL, and
// neither may pass the buffer's end).
func jitLog(buf []byte, n uint64) string {
	if n < uint64(len(buf)) {
		buf = buf[:n]
	}
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return strings.TrimSpace(string(buf))
}
