package cpu_test

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// benchGraph places every tensor of out's graph in one host buffer and
// returns a function that computes it.
func benchGraph(b *testing.B, be *cpu.Backend, out *runtime.Tensor) func() {
	b.Helper()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		b.Fatal(err)
	}
	var all, views []*runtime.Tensor
	for _, x := range append(append([]*runtime.Tensor{}, g.Leafs()...), g.Nodes()...) {
		if x.IsView() {
			views = append(views, x)
		} else {
			all = append(all, x)
		}
	}
	var size uint64
	for _, x := range all {
		size = runtime.AlignUp(size+x.NBytes(), 64)
	}
	buf, err := be.DefaultBufferType().AllocBuffer(size)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	var off uint64
	for _, x := range all {
		if err := runtime.TensorAlloc(buf, x, off); err != nil {
			b.Fatal(err)
		}
		off = runtime.AlignUp(off+x.NBytes(), 64)
	}
	for _, v := range views {
		if err := runtime.ViewInit(v); err != nil {
			b.Fatal(err)
		}
	}
	if err := buf.Clear(0x3c); err != nil { // small finite values in every type
		b.Fatal(err)
	}
	return func() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMulMat reports GFLOP/s of MUL_MAT n×n×n through the backend.
func BenchmarkMulMat(b *testing.B) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		for _, n := range []int64{512, 1024} {
			b.Run(fmt.Sprintf("%s/%d", typ, n), func(b *testing.B) {
				be := cpu.NewBackend(cpu.BackendOptions{})
				c := runtime.NewContext()
				run := benchGraph(b, be, c.MulMat(c.NewTensor(typ, n, n), c.NewTensor(runtime.TypeF32, n, n)))
				run()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run()
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkRowOps reports GB/s (bytes read plus written) of the element-wise
// and row ops through the backend on 4M f32 elements.
func BenchmarkRowOps(b *testing.B) {
	const ne0, ne1 = 4096, 1024
	ops := []struct {
		name  string
		build func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor
		bytes int64
	}{
		{"Add", func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor { return c.Add(x, y) }, 3},
		{"Mul", func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor { return c.Mul(x, y) }, 3},
		{"SoftMax", func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor { return c.SoftMax(x) }, 2},
		{"RMSNorm", func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor { return c.RMSNorm(x, 1e-5) }, 2},
		{"Cpy_f16", func(c *runtime.Context, x, y *runtime.Tensor) *runtime.Tensor {
			return c.Cpy(x, c.NewTensor(runtime.TypeF16, ne0, ne1))
		}, 2},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			be := cpu.NewBackend(cpu.BackendOptions{})
			c := runtime.NewContext()
			run := benchGraph(b, be, op.build(c, c.NewTensor(runtime.TypeF32, ne0, ne1), c.NewTensor(runtime.TypeF32, ne0, ne1)))
			run()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run()
			}
			b.ReportMetric(float64(op.bytes*4*ne0*ne1)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
