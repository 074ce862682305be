package cuda

import (
	"errors"
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// Sentinel errors of the CUDA backend. Errors from this package wrap one of
// them, or a *DriverError, so that callers can branch with errors.Is.
var (
	// ErrNoDriver: libcuda.so.1 could not be loaded, lacks an entry point
	// the backend needs, or cuInit failed for a reason other than a missing
	// device.
	ErrNoDriver = errors.New("cuda: no usable CUDA driver")
	// ErrNoDevice: the driver works but reports no device (or not the
	// device asked for).
	ErrNoDevice = errors.New("cuda: no CUDA device")
	// ErrOutOfMemory: the device or the pinned host allocator is out of
	// memory. It wraps runtime.ErrOutOfMemory.
	ErrOutOfMemory = fmt.Errorf("cuda: %w", runtime.ErrOutOfMemory)
	// ErrClosed: use of a backend after Close.
	ErrClosed = errors.New("cuda: backend closed")
	// ErrContextLost: a kernel faulted on the device (illegal or
	// misaligned address, illegal instruction, launch failure, ...). Such
	// errors are sticky: the device's context, shared by every Backend and
	// buffer of that device in the process, refuses all further work, so
	// the process must restart to use the GPU again.
	ErrContextLost = errors.New("cuda: device context lost after a kernel fault")
)

// Result is a CUresult, the status code every driver entry point returns.
type Result int32

// CUresult values the backend branches on (values from the driver API).
const (
	resultSuccess           Result = 0
	resultInvalidValue      Result = 1
	resultOutOfMemory       Result = 2
	resultNotInitialized    Result = 3
	resultNoDevice          Result = 100
	resultInvalidDevice     Result = 101
	resultInvalidPTX        Result = 218
	resultNotFound          Result = 500
	resultNotReady          Result = 600
	resultLaunchOutOfRes    Result = 701
	resultInsufficientDrv   Result = 35
	resultUnsupportedPTX    Result = 222
	resultIllegalAddress    Result = 700
	resultUnknown           Result = 999
	resultHostMemRegistered Result = 712
	resultLaunchTimeout     Result = 702
	resultHardwareStack     Result = 714
	resultIllegalInstr      Result = 715
	resultMisaligned        Result = 716
	resultInvalidAddrSpace  Result = 717
	resultInvalidPC         Result = 718
	resultLaunchFailed      Result = 719
)

// sticky reports whether r is one of the driver's unrecoverable kernel
// faults, after which the context accepts no more work.
func sticky(r Result) bool {
	switch r {
	case resultIllegalAddress, resultLaunchTimeout, resultHardwareStack, resultIllegalInstr,
		resultMisaligned, resultInvalidAddrSpace, resultInvalidPC, resultLaunchFailed:
		return true
	}
	return false
}

// fallbackNames names the codes above when the driver cannot be asked
// (cuGetErrorName unavailable or failing).
var fallbackNames = map[Result]string{
	resultSuccess:          "CUDA_SUCCESS",
	resultInvalidValue:     "CUDA_ERROR_INVALID_VALUE",
	resultOutOfMemory:      "CUDA_ERROR_OUT_OF_MEMORY",
	resultNotInitialized:   "CUDA_ERROR_NOT_INITIALIZED",
	resultInsufficientDrv:  "CUDA_ERROR_INSUFFICIENT_DRIVER",
	resultNoDevice:         "CUDA_ERROR_NO_DEVICE",
	resultInvalidDevice:    "CUDA_ERROR_INVALID_DEVICE",
	resultInvalidPTX:       "CUDA_ERROR_INVALID_PTX",
	resultUnsupportedPTX:   "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	resultNotFound:         "CUDA_ERROR_NOT_FOUND",
	resultNotReady:         "CUDA_ERROR_NOT_READY",
	resultIllegalAddress:   "CUDA_ERROR_ILLEGAL_ADDRESS",
	resultLaunchOutOfRes:   "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	resultLaunchTimeout:    "CUDA_ERROR_LAUNCH_TIMEOUT",
	resultHardwareStack:    "CUDA_ERROR_HARDWARE_STACK_ERROR",
	resultIllegalInstr:     "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	resultMisaligned:       "CUDA_ERROR_MISALIGNED_ADDRESS",
	resultInvalidAddrSpace: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	resultInvalidPC:        "CUDA_ERROR_INVALID_PC",
	resultLaunchFailed:     "CUDA_ERROR_LAUNCH_FAILED",
	resultUnknown:          "CUDA_ERROR_UNKNOWN",
}

// DriverError is a failed driver call: the entry point, the CUresult and
// the driver's name and description for it.
type DriverError struct {
	Func string // driver entry point, e.g. "cuMemAlloc_v2"
	Code Result
	Name string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Desc string // the driver's description, may be empty
}

// Error formats the call, the driver's name of the code and its description.
func (e *DriverError) Error() string {
	if e.Desc != "" {
		return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Func, e.Name, int32(e.Code), e.Desc)
	}
	return fmt.Sprintf("cuda: %s: %s (%d)", e.Func, e.Name, int32(e.Code))
}

// Is matches the package sentinels (and through ErrOutOfMemory,
// runtime.ErrOutOfMemory) by code; the sticky kernel faults match
// ErrContextLost.
func (e *DriverError) Is(target error) bool {
	switch target {
	case ErrContextLost:
		return sticky(e.Code)
	case ErrOutOfMemory, runtime.ErrOutOfMemory:
		return e.Code == resultOutOfMemory
	case ErrNoDevice:
		return e.Code == resultNoDevice || e.Code == resultInvalidDevice
	}
	return false
}

// resultName returns the fallback name of a code.
func resultName(r Result) string {
	if n, ok := fallbackNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", int32(r))
}
