//go:build opengl

package opengl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkTransfer measures SetTensor and GetTensor throughput by size
// for both upload modes.
func BenchmarkTransfer(b *testing.B) {
	for _, mode := range []UploadMode{UploadSubData, UploadMapped} {
		be := open(b, Config{Upload: mode})
		for _, size := range []int64{4 << 10, 256 << 10, 4 << 20, 64 << 20} {
			buf, err := be.DefaultBufferType().AllocBuffer(uint64(size))
			if err != nil {
				b.Fatal(err)
			}
			x := runtime.NewContext().NewTensor1D(runtime.TypeI8, size)
			if err := runtime.TensorAlloc(buf, x, 0); err != nil {
				b.Fatal(err)
			}
			host := make([]byte, size)
			// Touch the memory once so first-use page faults are not timed.
			if err := runtime.SetTensorData(x, host, 0); err != nil {
				b.Fatal(err)
			}
			for _, dir := range []string{"set", "get"} {
				b.Run(fmt.Sprintf("%s/%s/%s", mode, dir, strings.ReplaceAll(membench.FormatSize(uint64(size)), " ", "")), func(b *testing.B) {
					b.SetBytes(size)
					start := time.Now()
					for i := 0; i < b.N; i++ {
						var err error
						if dir == "set" {
							err = runtime.SetTensorData(x, host, 0)
						} else {
							err = runtime.GetTensorData(x, host, 0)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(size)*float64(b.N)/time.Since(start).Seconds()/1e9, "GB/s")
				})
			}
			_ = buf.Free()
		}
	}
}

// prepared is a graph allocated and filled on one backend.
type prepared struct {
	be  runtime.Backend
	g   *runtime.Graph
	buf runtime.Buffer
}

func prepare(tb testing.TB, be runtime.Backend, build func(c *runtime.Context) *runtime.Tensor) *prepared {
	tb.Helper()
	c := runtime.NewContext()
	out := build(c)
	if c.Err() != nil {
		tb.Fatal(c.Err())
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		tb.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(c, be.DefaultBufferType())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = buf.Free() })
	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range g.Leafs() {
		if err := runtime.SetTensorData(l, randomBytes(l, r, -1, 1), 0); err != nil {
			tb.Fatal(err)
		}
	}
	return &prepared{be: be, g: g, buf: buf}
}

// perRun times Compute, repeating for at least d, and returns seconds per
// run.
func (p *prepared) perRun(tb testing.TB, d time.Duration) float64 {
	tb.Helper()
	if err := p.be.Compute(p.g); err != nil { // warm up (kernel compile)
		tb.Fatal(err)
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d || n == 0 {
		if err := p.be.Compute(p.g); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	return time.Since(start).Seconds() / float64(n)
}

// BenchmarkOps measures MUL_MAT (GFLOP/s) and element-wise ADD (GB/s) on
// GL, with the CPU backend timed in the same run: the "x_cpu" metric is GL
// throughput over CPU throughput.
func BenchmarkOps(b *testing.B) {
	gl := open(b, Config{})
	ref := cpu.NewBackend(cpu.BackendOptions{})
	f32 := runtime.TypeF32
	type bench struct {
		name  string
		build func(c *runtime.Context) *runtime.Tensor
		work  float64 // flops or bytes per run
		unit  string
	}
	var benches []bench
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeF16, runtime.TypeQ8_0, runtime.TypeQ4_0} {
		for _, mnk := range [][3]int64{{512, 1, 512}, {256, 64, 256}} {
			m, n, k := mnk[0], mnk[1], mnk[2]
			benches = append(benches, bench{
				name: fmt.Sprintf("mul_mat/%s/m%d_n%d_k%d", typ, m, n, k),
				build: func(c *runtime.Context) *runtime.Tensor {
					return c.MulMat(c.NewTensor2D(typ, k, m), c.NewTensor2D(f32, k, n))
				},
				work: 2 * float64(m*n*k), unit: "GFLOP/s",
			})
		}
	}
	for _, n := range []int64{1 << 16, 1 << 20} {
		benches = append(benches, bench{
			name: fmt.Sprintf("add/f32/%d", n),
			build: func(c *runtime.Context) *runtime.Tensor {
				return c.Add(c.NewTensor1D(f32, n), c.NewTensor1D(f32, n))
			},
			work: 12 * float64(n), unit: "GB/s",
		})
		benches = append(benches, bench{
			name: fmt.Sprintf("silu/f32/%d", n),
			build: func(c *runtime.Context) *runtime.Tensor {
				return c.SILU(c.NewTensor1D(f32, n))
			},
			work: 8 * float64(n), unit: "GB/s",
		})
	}
	// FLASH_ATTN_EXT at one of test-backend-ops' shapes (hsk = hsv = 64,
	// 4 heads, 512 keys, 32 queries; f16 K/V and mask).
	benches = append(benches, bench{
		name: "flash_attn_ext/f16/d64_kv512_nq32",
		build: func(c *runtime.Context) *runtime.Tensor {
			f16 := runtime.TypeF16
			q := c.NewTensor4D(f32, 64, 32, 4, 1)
			k, v := c.NewTensor4D(f16, 64, 512, 4, 1), c.NewTensor4D(f16, 64, 512, 4, 1)
			mask := c.NewTensor4D(f16, 512, 32, 1, 1)
			return c.FlashAttnExt(q, k, v, mask, 0.125, 0, 0)
		},
		work: 2 * 2 * 64 * 512 * 32 * 4, unit: "GFLOP/s",
	})
	for _, bn := range benches {
		b.Run(bn.name, func(b *testing.B) {
			cp := prepare(b, ref, bn.build)
			cpuPer := cp.perRun(b, 200*time.Millisecond)
			gp := prepare(b, gl, bn.build)
			if err := gl.Compute(gp.g); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := gl.Compute(gp.g); err != nil {
					b.Fatal(err)
				}
			}
			glPer := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(bn.work/glPer/1e9, bn.unit)
			b.ReportMetric(bn.work/cpuPer/1e9, "cpu_"+bn.unit)
			b.ReportMetric(cpuPer/glPer, "x_cpu")
		})
	}
}
