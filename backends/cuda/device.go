package cuda

import (
	"fmt"
	goruntime "runtime"
	"sync"
)

// device is one CUDA device with its retained primary context. Buffers and
// backends hold references; the primary context is released and the
// driver library closed when the last reference goes.
type device struct {
	drv     *driver
	ordinal int
	dev     int32
	ctx     cuContext
	name    string // the driver's device name, e.g. "NVIDIA H200"
	total   uint64 // bytes of device memory
	uva     bool   // unified addressing: pinned host memory is device-addressable
	ccMajor int32
	ccMinor int32
	sms     int32

	mu   sync.Mutex
	refs int
}

// openDevice loads the driver, initialises it and retains the primary
// context of device ordinal.
func openDevice(ordinal int) (*device, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	d, err := openDeviceWith(drv, ordinal)
	if err != nil {
		_ = drv.close()
		return nil, err
	}
	return d, nil
}

func openDeviceWith(drv *driver, ordinal int) (*device, error) {
	if err := drv.initDriver(); err != nil {
		return nil, err
	}
	var n int32
	if err := drv.check("cuDeviceGetCount", drv.cuDeviceGetCount(&n)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDriver, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver reports no devices", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("%w: device %d asked for, %d present", ErrNoDevice, ordinal, n)
	}
	d := &device{drv: drv, ordinal: ordinal, refs: 1}
	if err := drv.check("cuDeviceGet", drv.cuDeviceGet(&d.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	name := make([]byte, 256)
	if err := drv.check("cuDeviceGetName", drv.cuDeviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
		return nil, err
	}
	d.name = cString(&name[0])
	if err := drv.check("cuDeviceTotalMem_v2", drv.cuDeviceTotalMem(&d.total, d.dev)); err != nil {
		return nil, err
	}
	var uva int32
	for _, a := range []struct {
		attr int32
		v    *int32
	}{
		{attrUnifiedAddressing, &uva},
		{attrComputeCapabilityMajor, &d.ccMajor},
		{attrComputeCapabilityMinor, &d.ccMinor},
		{attrMultiprocessorCount, &d.sms},
	} {
		if err := drv.check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(a.v, a.attr, d.dev)); err != nil {
			return nil, err
		}
	}
	d.uva = uva != 0
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, err
	}
	return d, nil
}

// do runs f on a locked OS thread with the device's context current, so
// that driver calls from any goroutine reach the right context.
func (d *device) do(f func() error) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx)); err != nil {
		return err
	}
	return f()
}

// retain adds a reference.
func (d *device) retain() {
	d.mu.Lock()
	d.refs++
	d.mu.Unlock()
}

// release drops a reference; the last one releases the primary context
// and the driver library.
func (d *device) release() error {
	d.mu.Lock()
	d.refs--
	last := d.refs == 0
	d.mu.Unlock()
	if !last {
		return nil
	}
	err := d.drv.check("cuDevicePrimaryCtxRelease_v2", d.drv.cuDevicePrimaryCtxRelease(d.dev))
	if cerr := d.drv.close(); err == nil {
		err = cerr
	}
	return err
}

// memInfo returns free and total device memory.
func (d *device) memInfo() (free, total uint64, err error) {
	err = d.do(func() error {
		return d.drv.check("cuMemGetInfo_v2", d.drv.cuMemGetInfo(&free, &total))
	})
	return free, total, err
}

// DeviceCount returns the number of CUDA devices. Without a usable driver
// it returns an error matching ErrNoDriver (or ErrNoDevice).
func DeviceCount() (int, error) {
	drv, err := loadDriver()
	if err != nil {
		return 0, err
	}
	defer drv.close()
	if err := drv.initDriver(); err != nil {
		return 0, err
	}
	var n int32
	if err := drv.check("cuDeviceGetCount", drv.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}
