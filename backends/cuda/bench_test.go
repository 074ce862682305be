package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// nominalPeakGBs is the memory bandwidth the vendor quotes for the card, in
// GB/s: GOGML_PEAK_GBS if set, else 4800 for an H200, else the bandwidth
// derived from the driver's clock and bus width.
func nominalPeakGBs(b *Backend) float64 {
	if s := os.Getenv("GOGML_PEAK_GBS"); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
			return v
		}
	}
	if strings.Contains(b.dev.name, "H200") {
		return 4800
	}
	return b.PeakBandwidth() / 1e9
}

// benchGraph builds a graph with build, places it in CUDA0 and returns it
// ready to compute.
func benchGraph(b *testing.B, be *Backend, build func(c *runtime.Context) *runtime.Tensor) *runtime.Graph {
	b.Helper()
	g, _, _ := buildCase(b, opCase{name: "bench", build: build}, be.DeviceBufferType())
	return g
}

// timeGraph returns the device time of one Compute of g, averaged over
// b.N runs after a warm-up run.
func timeGraph(b *testing.B, be *Backend, g *runtime.Graph) time.Duration {
	b.Helper()
	if err := be.Compute(g); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	d, err := be.TimeDevice(func() error {
		for i := 0; i < b.N; i++ {
			if err := be.Compute(g); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return d / time.Duration(b.N)
}

// BenchmarkElementwise measures f32 element-wise ops on 64 Mi elements
// (contiguous), reporting GB/s moved and the share of the card's peak.
func BenchmarkElementwise(b *testing.B) {
	be := newTestBackend(b)
	const n = 64 << 20
	cases := []struct {
		name  string
		bytes float64
		build func(c *runtime.Context) *runtime.Tensor
	}{
		{"add", 3 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor(runtime.TypeF32, 4096, n/4096), c.NewTensor(runtime.TypeF32, 4096, n/4096))
		}},
		{"add_row_broadcast", 2 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor(runtime.TypeF32, 4096, n/4096), c.NewTensor(runtime.TypeF32, 4096))
		}},
		{"scale", 2 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.Scale(c.NewTensor(runtime.TypeF32, 4096, n/4096), 0.5)
		}},
		{"silu", 2 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.SILU(c.NewTensor(runtime.TypeF32, 4096, n/4096))
		}},
		{"cpy_f32_f16", 6 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor(runtime.TypeF32, 4096, n/4096), c.NewTensor(runtime.TypeF16, 4096, n/4096))
		}},
		{"rms_norm", 2 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.RMSNorm(c.NewTensor(runtime.TypeF32, 4096, n/4096), 1e-6)
		}},
		{"soft_max", 2 * 4 * n, func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMax(c.NewTensor(runtime.TypeF32, 4096, n/4096))
		}},
	}
	peak := nominalPeakGBs(be)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := benchGraph(b, be, c.build)
			d := timeGraph(b, be, g)
			gbs := c.bytes / d.Seconds() / 1e9
			b.ReportMetric(gbs, "GB/s")
			b.ReportMetric(100*gbs/peak, "%peak")
			b.ReportMetric(float64(d.Microseconds()), "us/op-device")
		})
	}
}

// BenchmarkMulMat measures matrix products, reporting TFLOP/s.
func BenchmarkMulMat(b *testing.B) {
	be := newTestBackend(b)
	for _, c := range []struct {
		typ     runtime.Type
		k, m, n int64
	}{
		{runtime.TypeF32, 4096, 4096, 4096},
		{runtime.TypeF32, 4096, 4096, 512},
		{runtime.TypeF16, 4096, 4096, 512},
		{runtime.TypeQ8_0, 4096, 4096, 512},
		{runtime.TypeQ4_0, 4096, 4096, 512},
		{runtime.TypeF32, 4096, 11008, 1},
		{runtime.TypeQ4_0, 4096, 11008, 1},
	} {
		b.Run(fmt.Sprintf("%s_%dx%dx%d", c.typ, c.k, c.m, c.n), func(b *testing.B) {
			g := benchGraph(b, be, func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.MulMat(ctx.NewTensor(c.typ, c.k, c.m), ctx.NewTensor(runtime.TypeF32, c.k, c.n))
			})
			d := timeGraph(b, be, g)
			flops := 2 * float64(c.k) * float64(c.m) * float64(c.n)
			b.ReportMetric(flops/d.Seconds()/1e12, "TFLOP/s")
			weights := float64(c.typ.RowSize(c.k) * uint64(c.m))
			b.ReportMetric(weights/d.Seconds()/1e9, "weightGB/s")
		})
	}
}

// BenchmarkTransfer measures host<->device copies of 256 MiB from pageable
// Go memory and from pinned CUDA_Host memory, device-to-device copies and
// device memsets (synchronous driver calls, host-timed).
func BenchmarkTransfer(b *testing.B) {
	be := newTestBackend(b)
	const n = 256 << 20
	mk := func(bt runtime.BufferType) (*runtime.Tensor, runtime.Buffer) {
		ctx := runtime.NewContext()
		x := ctx.NewTensor(runtime.TypeI8, n)
		buf, err := gallocr.AllocCtxTensors(ctx, bt)
		if err != nil {
			b.Fatal(err)
		}
		return x, buf
	}
	dev, dbuf := mk(be.DeviceBufferType())
	defer dbuf.Free()
	pin, pbuf := mk(be.HostBufferType())
	defer pbuf.Free()
	pageable := make([]byte, n)
	for i := range pageable {
		pageable[i] = byte(i)
	}
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			if err := f(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	run("HtoD_pageable", func() error { return runtime.SetTensorData(dev, pageable, 0) })
	run("DtoH_pageable", func() error { return runtime.GetTensorData(dev, pageable, 0) })
	run("HtoD_pinned", func() error { return runtime.CopyTensorData(pin, dev) })
	run("DtoH_pinned", func() error { return runtime.CopyTensorData(dev, pin) })
	dev2, dbuf2 := mk(be.DeviceBufferType())
	defer dbuf2.Free()
	run("DtoD", func() error { return runtime.CopyTensorData(dev, dev2) })
	run("memset_device", func() error { return dbuf.Clear(1) })
}

// BenchmarkAlloc measures AllocBuffer+Free latency of device and pinned
// memory.
func BenchmarkAlloc(b *testing.B) {
	be := newTestBackend(b)
	for _, bt := range []runtime.BufferType{be.DeviceBufferType(), be.HostBufferType()} {
		for _, size := range []uint64{4 << 10, 1 << 20, 256 << 20} {
			b.Run(fmt.Sprintf("%s_%dKiB", bt.Name(), size>>10), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					buf, err := bt.AllocBuffer(size)
					if err != nil {
						b.Fatal(err)
					}
					if err := buf.Free(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/alloc+free")
			})
		}
	}
}

// BenchmarkLaunchOverhead measures the host cost of one small kernel
// launch and stream sync through Compute.
func BenchmarkLaunchOverhead(b *testing.B) {
	be := newTestBackend(b)
	g := benchGraph(b, be, func(c *runtime.Context) *runtime.Tensor {
		return c.Scale(c.NewTensor(runtime.TypeF32, 256), 2)
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
}
