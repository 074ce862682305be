package cuda

import (
	"fmt"
	"time"
)

// TimeDevice runs run, which queues device work (kernels on the backend's
// stream, or driver copies and memsets), between two events recorded on
// the legacy default stream, which orders with both, and returns the
// device time between them after the work has finished.
func (b *Backend) TimeDevice(run func() error) (time.Duration, error) {
	var start, end cuEvent
	d := b.dev.drv
	err := b.dev.do(func() error {
		if err := d.check("cuEventCreate", d.cuEventCreate(&start, 0)); err != nil {
			return err
		}
		if err := d.check("cuEventCreate", d.cuEventCreate(&end, 0)); err != nil {
			return err
		}
		return d.check("cuEventRecord", d.cuEventRecord(start, 0))
	})
	defer func() {
		_ = b.dev.do(func() error {
			if start != 0 {
				d.cuEventDestroy(start)
			}
			if end != 0 {
				d.cuEventDestroy(end)
			}
			return nil
		})
	}()
	if err != nil {
		return 0, err
	}
	if err := run(); err != nil {
		return 0, err
	}
	var ms float32
	err = b.dev.do(func() error {
		if err := d.check("cuEventRecord", d.cuEventRecord(end, 0)); err != nil {
			return err
		}
		if err := d.check("cuEventSynchronize", d.cuEventSynchronize(end)); err != nil {
			return err
		}
		return d.check("cuEventElapsedTime", d.cuEventElapsedTime(&ms, start, end))
	})
	if err != nil {
		return 0, fmt.Errorf("timing: %w", err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// PeakBandwidth returns the device memory's theoretical bandwidth in
// bytes per second from the driver's memory clock and bus width
// attributes (0 when the driver does not report them).
func (b *Backend) PeakBandwidth() float64 {
	var clockKHz, busBits int32
	d := b.dev.drv
	err := b.dev.do(func() error {
		if err := d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&clockKHz, attrMemoryClockRate, b.dev.dev)); err != nil {
			return err
		}
		return d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&busBits, attrGlobalMemoryBusWidth, b.dev.dev))
	})
	if err != nil {
		return 0
	}
	// Double data rate: two transfers per clock.
	return 2 * float64(clockKHz) * 1e3 * float64(busBits) / 8
}
