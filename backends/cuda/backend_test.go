package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// newTestBackend opens CUDA device 0, or skips the test with the reason
// when there is no usable driver or device. With GOGML_REQUIRE_CUDA=1 (the
// device check sets it) a missing device fails the test instead.
func newTestBackend(t testing.TB) *Backend {
	t.Helper()
	b, err := New(0)
	if err != nil {
		if os.Getenv("GOGML_REQUIRE_CUDA") == "1" {
			t.Fatalf("GOGML_REQUIRE_CUDA=1 but New(0): %v", err)
		}
		if errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) {
			t.Skipf("no CUDA: %v", err)
		}
		t.Fatalf("New(0): %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func TestDeviceInfo(t *testing.T) {
	b := newTestBackend(t)
	info := b.Device()
	t.Logf("%s: %s, %d MiB free of %d MiB", info.Name, info.Description, info.FreeMemory>>20, info.TotalMemory>>20)
	if info.Name != "CUDA0" || info.TotalMemory == 0 || info.FreeMemory > info.TotalMemory {
		t.Fatalf("bad device info %+v", info)
	}
	if b.DeviceBufferType().MaxSize() != b.dev.total {
		t.Fatalf("MaxSize %d, total %d", b.DeviceBufferType().MaxSize(), b.dev.total)
	}
}

// TestBufferConformance runs the shared buffer suite on CUDA0 and
// CUDA_Host, copying across them and to and from CPU memory.
func TestBufferConformance(t *testing.T) {
	b := newTestBackend(t)
	plain := cpu.DefaultBufferType()
	t.Run("CUDA0", func(t *testing.T) {
		backendtest.RunBuffers(t, b.DeviceBufferType(), backendtest.WithOther(plain), backendtest.WithOther(b.HostBufferType()))
	})
	t.Run("CUDA_Host", func(t *testing.T) {
		backendtest.RunBuffers(t, b.HostBufferType(), backendtest.WithOther(plain), backendtest.WithOther(b.DeviceBufferType()))
	})
	t.Run("CUDA0_Max1MiB", func(t *testing.T) {
		backendtest.RunBuffers(t, b.DeviceBufferType().WithMaxSize(1<<20), backendtest.WithOther(plain))
	})
}

// TestOutOfMemoryLeavesBackendUsable allocates more than the device has,
// then allocates and computes normally.
func TestOutOfMemoryLeavesBackendUsable(t *testing.T) {
	b := newTestBackend(t)
	bt := b.DeviceBufferType()
	_, err := bt.AllocBuffer(bt.MaxSize())
	if err == nil {
		t.Skip("the whole device memory could be allocated in one buffer")
	}
	if !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("alloc of all memory: %v, want an error matching runtime.ErrOutOfMemory", err)
	}
	t.Logf("expected failure: %v", err)
	runOpCase(t, b, bt, opCases()[0])
}

// TestSplitBuffers places a context's tensors across several CUDA0
// buffers of an artificial 1 MiB max size, fills them, and computes a
// graph whose operands live in different buffers.
func TestSplitBuffers(t *testing.T) { splitBuffers(t, newTestBackend(t)) }

func splitBuffers(t *testing.T, b *Backend) {
	bt := b.DeviceBufferType().WithMaxSize(1 << 20)
	ctx := runtime.NewContext()
	var ins []*runtime.Tensor
	for i := 0; i < 6; i++ {
		ins = append(ins, ctx.NewTensor(runtime.TypeF32, 256, 300)) // 300 KiB each
	}
	sum := ins[0]
	for _, x := range ins[1:] {
		sum = ctx.Add(sum, x)
	}
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	buf, err := gallocr.AllocCtxTensors(ctx, bt)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	mb, ok := buf.(*runtime.MultiBuffer)
	if !ok || len(mb.Parts()) < 3 {
		t.Fatalf("want a multi-buffer of at least 3 parts, got %T", buf)
	}
	for _, p := range mb.Parts() {
		if p.Size() > 1<<20 {
			t.Fatalf("part of %d bytes exceeds the max size", p.Size())
		}
	}
	want := make([]float32, 256*300)
	for i, x := range ins {
		vals := make([]float32, 256*300)
		for j := range vals {
			vals[j] = float32(i*1000 + j%977)
			want[j] += vals[j]
		}
		if err := runtime.SetTensorData(x, f32Bytes(vals), 0); err != nil {
			t.Fatal(err)
		}
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(sum); err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(g); err != nil {
		t.Fatal(err)
	}
	got := readF32(t, sum)
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("element %d = %v, want %v", j, got[j], want[j])
		}
	}
	t.Logf("%d parts", len(mb.Parts()))
}

// TestGetRowsBadIndex: a row index outside the source is an error and
// the backend stays usable.
func TestGetRowsBadIndex(t *testing.T) { getRowsBadIndex(t, newTestBackend(t)) }

// TestConcurrentCallers computes from several goroutines at once; each
// call must bind the device context on its own thread.
func TestConcurrentCallers(t *testing.T) {
	b := newTestBackend(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runOpCase(t, b, b.DeviceBufferType(), opCases()[0])
		}()
	}
	wg.Wait()
}

// TestOps computes each case on the GPU with tensors in CUDA0 and in
// CUDA_Host, and compares with the CPU backend.
func TestOps(t *testing.T) {
	b := newTestBackend(t)
	types := []runtime.BufferType{b.DeviceBufferType()}
	if b.SupportsBufferType(b.HostBufferType()) {
		types = append(types, b.HostBufferType())
	}
	for _, bt := range types {
		t.Run(bt.Name(), func(t *testing.T) {
			for _, c := range opCases() {
				t.Run(c.name, func(t *testing.T) { runOpCase(t, b, bt, c) })
			}
		})
	}
}

// ggufTypes are the weight types of the write-demo files TestGGUFTypes
// runs (f32 and q8_0 have the built-in model's tests too).
var ggufTypes = []runtime.Type{runtime.TypeF16, runtime.TypeBF16, runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0,
	runtime.TypeQ5_1, runtime.TypeQ8_0, runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K}

// TestGGUFTypes loads a write-demo GGUF file of every weight type onto the
// GPU (placed with AllocCtxTensors, as `gogml run -model F -backend cuda`
// does) and compares the logits of a prompt (the tiled products) and a
// greedy step (the matrix-vector ones) with the CPU backend's on the same
// file.
func TestGGUFTypes(t *testing.T) { ggufVsCPU(t, newTestBackend(t), ggufTypes) }

// ggufVsCPU runs ggufTypes' comparison for types on be: the same greedy
// tokens and an NMSE of the logits within TestDeviceGGUF's 5e-4 (the
// activations round as the CPU's, so it is far smaller: ~1e-13 on the
// emulator). Every other type's file has grouped-query attention.
func ggufVsCPU(t *testing.T, be *Backend, types []runtime.Type) {
	for i, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := llama.DefaultConfig()
			cfg.Vocab, cfg.Heads, cfg.Layers, cfg.Ctx, cfg.Seed = 40, 4, 1, 16, 3
			cfg.Dim = int(max(64, typ.BlockSize()))
			cfg.FFN = cfg.Dim
			if i%2 == 1 {
				cfg.KVHeads = 2
			}
			gw, err := llama.NewGGUFWriter(llama.GenerateWeights(cfg), typ)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "demo.gguf")
			if err := gw.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			dev, err := llama.LoadGGUF(path, llama.LoadOptions{Options: llama.Options{Backend: be}})
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			cb := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
			defer cb.Close()
			host, err := llama.LoadGGUF(path, llama.LoadOptions{Options: llama.Options{Backend: cb}})
			if err != nil {
				t.Fatal(err)
			}
			defer host.Close()
			var num, den float64
			stepBoth(t, host, dev, []int32{1, 5, 9, 12}, 2, cfg.Vocab, func(step int, a, b []float32) {
				for j := range a {
					d := float64(a[j] - b[j])
					num, den = num+d*d, den+float64(a[j])*float64(a[j])
				}
				if got, want := llama.Argmax(b[len(b)-cfg.Vocab:]), llama.Argmax(a[len(a)-cfg.Vocab:]); got != want {
					t.Errorf("step %d: greedy token %d, CPU %d", step, got, want)
				}
			})
			if e := num / den; !(e <= 5e-4) {
				t.Errorf("NMSE %.3g against the CPU", e)
			}
			t.Logf("%s vs CPU on a %s file: NMSE %.3g", be.Device().Name, typ, num/den)
		})
	}
}

// stepBoth evaluates batch on host and dev, then steps-1 more times the
// host's greedy next token, calling cmp with each step's logits.
func stepBoth(t *testing.T, host, dev *llama.Model, batch []int32, steps, vocab int, cmp func(step int, a, b []float32)) {
	t.Helper()
	for step := 0; step < steps; step++ {
		a, err := host.Eval(batch)
		if err != nil {
			t.Fatal(err)
		}
		b, err := dev.Eval(batch)
		if err != nil {
			t.Fatal(err)
		}
		cmp(step, a, b)
		batch = []int32{int32(llama.Argmax(a[len(a)-vocab:]))}
	}
}

// opCase is one graph to compare with the CPU backend.
type opCase struct {
	name  string
	build func(ctx *runtime.Context) *runtime.Tensor
	// idx bounds the values of i32 inputs: [0, idx).
	idx int32
	// positive fills float inputs from [0.1, 2) instead of [-1, 1).
	positive bool
	// nmse is the largest normalized mean squared error allowed.
	nmse float64
}

func opCases() []opCase {
	F32, F16 := runtime.TypeF32, runtime.TypeF16
	var cs []opCase
	add := func(name string, nmse float64, build func(ctx *runtime.Context) *runtime.Tensor) {
		cs = append(cs, opCase{name: name, build: build, nmse: nmse})
	}
	add("add_broadcast", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Add(c.NewTensor(F32, 33, 7, 3, 2), c.NewTensor(F32, 33, 1, 3, 1))
	})
	add("sub_scalar_row", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Sub(c.NewTensor(F32, 300, 5), c.NewTensor(F32, 1, 5))
	})
	add("mul_view", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		a := c.NewTensor(F32, 64, 16)
		return c.Mul(c.Transpose(a), c.NewTensor(F32, 16))
	})
	add("div", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Div(c.NewTensor(F32, 70, 9), c.Add1(c.Sqr(c.NewTensor(F32, 70, 9)), c.NewTensor(F32, 1)))
	})
	add("add_inplace", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.AddInplace(c.NewTensor(F32, 100, 4), c.NewTensor(F32, 100, 4))
	})
	add("scale", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.Scale(c.NewTensor(F32, 1000, 3), 0.125) })
	add("sqrt_log", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		x := c.Add1(c.Sqr(c.NewTensor(F32, 500)), c.NewTensor(F32, 1))
		return c.Add(c.Sqrt(x), c.Log(x))
	})
	add("clamp", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.Clamp(c.NewTensor(F32, 200, 3), -0.5, 0.25) })
	for _, u := range []runtime.UnaryOp{runtime.UnaryAbs, runtime.UnaryNeg, runtime.UnaryTanh, runtime.UnaryRelu,
		runtime.UnarySigmoid, runtime.UnaryGelu, runtime.UnarySilu, runtime.UnaryExp} {
		add("unary_"+u.String(), 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.Unary(c.NewTensor(F32, 257, 5), u) })
	}
	add("sum_rows", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.SumRows(c.NewTensor(F32, 3000, 4, 2)) })
	add("mean", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.Mean(c.NewTensor(F32, 77, 9)) })
	add("repeat", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Repeat(c.NewTensor(F32, 5, 1, 3), c.NewTensor(F32, 10, 4, 3, 2))
	})
	add("repeat_f16", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Repeat(c.NewTensor(F16, 8, 2), c.NewTensor(F16, 8, 6))
	})
	for d := 0; d < 4; d++ {
		add(fmt.Sprintf("concat_dim%d", d), 1e-7, func(c *runtime.Context) *runtime.Tensor {
			ne := []int64{6, 5, 4, 3}
			ne2 := append([]int64(nil), ne...)
			ne2[d] = 2
			return c.Concat(c.NewTensor(F32, ne...), c.NewTensor(F32, ne2...), d)
		})
	}
	add("cpy_f32_f16", 1e-6, func(c *runtime.Context) *runtime.Tensor {
		return c.Cpy(c.NewTensor(F32, 40, 6), c.NewTensor(F16, 40, 6))
	})
	add("cpy_f16_f32_reshaped", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Cpy(c.NewTensor(F16, 40, 6), c.NewTensor(F32, 60, 4))
	})
	add("cont_transpose", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Cont(c.Transpose(c.NewTensor(F32, 37, 23)))
	})
	add("dup_permute", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.Dup(c.Permute(c.NewTensor(F32, 8, 5, 3, 2), 2, 0, 3, 1))
	})
	add("norm", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.Norm(c.NewTensor(F32, 4096, 3), 1e-5) })
	add("rms_norm", 1e-7, func(c *runtime.Context) *runtime.Tensor { return c.RMSNorm(c.NewTensor(F32, 100, 7), 1e-6) })
	add("rms_norm_inplace", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.RMSNormInplace(c.NewTensor(F32, 100, 7), 1e-6)
	})
	for _, typ := range []runtime.Type{F32, F16, runtime.TypeQ4_0, runtime.TypeQ8_0} {
		for _, sh := range [][3]int64{{64, 64, 64}, {96, 70, 33}, {256, 100, 1}, {4096, 32, 7}} {
			tol := 1e-7
			if typ != F32 {
				tol = 1e-6
			}
			k, m, n := sh[0], sh[1], sh[2]
			add(fmt.Sprintf("mul_mat_%s_%dx%dx%d", typ, k, m, n), tol, func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(c.NewTensor(typ, k, m), c.NewTensor(F32, k, n))
			})
		}
	}
	// The weight types beyond f32/f16/q4_0/q8_0, in shapes small enough for
	// the emulator: two blocks per row, a matrix-vector product and a
	// partial tile, with activations rounded as the CPU rounds them.
	for _, typ := range newMatTypes {
		k := 2 * max(typ.BlockSize(), 32)
		for _, sh := range [][2]int64{{9, 1}, {70, 5}} {
			m, n := sh[0], sh[1]
			// The activations round exactly as the CPU's (q4_1 and q5_1
			// with q8_1's block sums), so only the order of sums differs.
			add(fmt.Sprintf("mul_mat_%s_%dx%dx%d", typ, k, m, n), 1e-8, func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(c.NewTensor(typ, k, m), c.NewTensor(F32, k, n))
			})
		}
		cs = append(cs, opCase{name: "get_rows_" + typ.String(), idx: 10, nmse: 1e-7, build: func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(c.NewTensor(typ, k, 10, 2), c.NewTensor(runtime.TypeI32, 5, 2))
		}})
		add("cpy_"+typ.String()+"_f32", 1e-7, func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor(typ, k, 3, 2), c.NewTensor(F32, k, 6))
		})
	}
	add("mul_mat_q4_K_batched_broadcast", 1e-6, func(c *runtime.Context) *runtime.Tensor {
		return c.MulMat(c.NewTensor(runtime.TypeQ4_K, 256, 6, 2, 1), c.NewTensor(F32, 256, 3, 4, 3))
	})
	add("mul_mat_q5_1_batched_broadcast", 1e-8, func(c *runtime.Context) *runtime.Tensor {
		return c.MulMat(c.NewTensor(runtime.TypeQ5_1, 96, 6, 2, 1), c.NewTensor(F32, 96, 3, 4, 3))
	})
	add("mul_mat_q4_1_vec_batched", 1e-8, func(c *runtime.Context) *runtime.Tensor {
		return c.MulMat(c.NewTensor(runtime.TypeQ4_1, 64, 5, 1, 2), c.NewTensor(F32, 64, 1, 3, 2))
	})
	add("cpy_f32_bf16", 1e-5, func(c *runtime.Context) *runtime.Tensor {
		return c.Cpy(c.Transpose(c.NewTensor(F32, 30, 6)), c.NewTensor(runtime.TypeBF16, 6, 30))
	})
	add("mul_mat_batched_broadcast", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.MulMat(c.NewTensor(F32, 32, 20, 2, 1), c.NewTensor(F32, 32, 9, 4, 3))
	})
	add("mul_mat_permuted", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		k := c.Permute(c.NewTensor(F32, 16, 4, 10), 0, 2, 1, 3) // (16, 10, 4)
		q := c.Permute(c.NewTensor(F32, 16, 4, 6), 0, 2, 1, 3)  // (16, 6, 4)
		return c.MulMat(k, q)
	})
	for _, typ := range []runtime.Type{F32, F16, runtime.TypeQ4_0, runtime.TypeQ8_0} {
		tol := 1e-7
		cs = append(cs, opCase{name: "get_rows_" + typ.String(), idx: 10, nmse: tol, build: func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(c.NewTensor(typ, 64, 10, 2), c.NewTensor(runtime.TypeI32, 5, 2))
		}})
	}
	add("diag_mask_inf_soft_max", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.SoftMax(c.DiagMaskInf(c.NewTensor(F32, 12, 8, 3), 4))
	})
	add("soft_max_ext_mask_f32", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.SoftMaxExt(c.NewTensor(F32, 300, 6, 4), c.NewTensor(F32, 300, 8), 0.3, 0)
	})
	add("soft_max_ext_mask_f16_alibi", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.SoftMaxExt(c.NewTensor(F32, 32, 6, 5), c.NewTensor(F16, 32, 6), 1, 8)
	})
	add("soft_max_back", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		y := c.SoftMax(c.NewTensor(F32, 50, 4))
		return c.SoftMaxExtBack(c.NewTensor(F32, 50, 4), y, 0.5, 0)
	})
	add("silu_back", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.SiluBack(c.NewTensor(F32, 90, 3), c.NewTensor(F32, 90, 3))
	})
	add("rms_norm_back", 1e-7, func(c *runtime.Context) *runtime.Tensor {
		return c.RMSNormBack(c.NewTensor(F32, 90, 3), c.NewTensor(F32, 90, 3), 1e-5)
	})
	// Mamba-2's scan (scalar A, K = 1) and Mamba-1's (A per state element),
	// three sequences whose states come from slots 0..2.
	for _, na := range []int64{1, 16} {
		cs = append(cs, opCase{name: fmt.Sprintf("ssm_scan_a%d", na), idx: 3, nmse: 1e-6, build: func(c *runtime.Context) *runtime.Tensor {
			return c.SsmScan(c.NewTensor(F32, 16, 8, 4, 3), c.NewTensor(F32, 8, 4, 5, 3), c.NewTensor(F32, 4, 5, 3),
				c.NewTensor(F32, na, 4), c.NewTensor(F32, 16, 2, 5, 3), c.NewTensor(F32, 16, 2, 5, 3), c.NewTensor(runtime.TypeI32, 3), 1)
		}})
	}
	for _, mode := range []int32{runtime.RopeNormal, runtime.RopeNeoX} {
		cs = append(cs, opCase{name: fmt.Sprintf("rope_mode%d", mode), idx: 200, nmse: 1e-7, build: func(c *runtime.Context) *runtime.Tensor {
			return c.Rope(c.NewTensor(F32, 64, 4, 5), c.NewTensor(runtime.TypeI32, 5), 48, mode)
		}})
		cs = append(cs, opCase{name: fmt.Sprintf("rope_yarn_ff_mode%d", mode), idx: 4000, positive: true, nmse: 1e-6, build: func(c *runtime.Context) *runtime.Tensor {
			p := runtime.RopeParams{NCtxOrig: 4096, FreqBase: 10000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
			return c.RopeExt(c.NewTensor(F32, 128, 2, 3), c.NewTensor(runtime.TypeI32, 3), c.NewTensor(F32, 64), 128, mode, p)
		}})
		cs = append(cs, opCase{name: fmt.Sprintf("rope_back_mode%d", mode), idx: 200, nmse: 1e-7, build: func(c *runtime.Context) *runtime.Tensor {
			return c.RopeBack(c.NewTensor(F32, 32, 4, 5), c.NewTensor(runtime.TypeI32, 5), nil, 32, mode, runtime.DefaultRopeParams())
		}})
	}
	return cs
}

// newMatTypes are the MUL_MAT / GET_ROWS weight types added after f32,
// f16, q4_0 and q8_0.
var newMatTypes = []runtime.Type{runtime.TypeBF16, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1,
	runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K}

// buildCase builds c's graph in a fresh context, places every tensor in
// bt and fills the inputs deterministically.
func buildCase(t testing.TB, c opCase, bt runtime.BufferType) (*runtime.Graph, *runtime.Tensor, runtime.Buffer) {
	t.Helper()
	ctx := runtime.NewContext()
	out := c.build(ctx)
	if ctx.Err() != nil {
		t.Fatalf("build: %v", ctx.Err())
	}
	out.SetOutput()
	buf, err := gallocr.AllocCtxTensors(ctx, bt)
	if err != nil {
		t.Fatalf("alloc in %s: %v", bt.Name(), err)
	}
	t.Cleanup(func() { _ = buf.Free() })
	rng := rand.New(rand.NewPCG(1, 2))
	for _, x := range ctx.Tensors() {
		if x.Op != runtime.OpNone || x.IsView() {
			continue
		}
		n := x.Nelements()
		var data []byte
		if x.Type == runtime.TypeI32 {
			data = make([]byte, 4*n)
			for i := int64(0); i < n; i++ {
				v := uint32(rng.Int32N(max(c.idx, 1)))
				data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			}
		} else {
			vals := make([]float32, n)
			for i := range vals {
				if c.positive {
					vals[i] = 0.1 + 1.9*rng.Float32()
				} else {
					vals[i] = 2*rng.Float32() - 1
				}
			}
			data = make([]byte, x.NBytes())
			if err := cpukernels.FromFloat(x.Type, vals, data); err != nil {
				t.Fatalf("fill %s: %v", x, err)
			}
		}
		if err := runtime.SetTensorData(x, data, 0); err != nil {
			t.Fatalf("set %s: %v", x, err)
		}
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	return g, out, buf
}

func readF32(t testing.TB, x *runtime.Tensor) []float32 {
	t.Helper()
	raw := make([]byte, x.NBytes())
	if err := runtime.GetTensorData(x, raw, 0); err != nil {
		t.Fatalf("get %s: %v", x, err)
	}
	v, err := cpukernels.ReadF32(x, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func f32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		u := math.Float32bits(f)
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return out
}

// runOpCase computes c on b with tensors in bt and on the CPU backend, and
// compares the outputs.
func runOpCase(t *testing.T, b *Backend, bt runtime.BufferType, c opCase) {
	t.Helper()
	g, out, _ := buildCase(t, c, bt)
	for _, n := range g.Nodes() {
		if !b.SupportsOp(n) {
			t.Fatalf("node %s not supported", n)
		}
	}
	if err := b.Compute(g); err != nil {
		t.Fatalf("compute: %v", err)
	}
	got := readF32(t, out)

	cb := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	defer cb.Close()
	cg, cout, _ := buildCase(t, c, cpu.DefaultBufferType())
	if err := cb.Compute(cg); err != nil {
		t.Fatalf("cpu compute: %v", err)
	}
	want := readF32(t, cout)
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d", len(got), len(want))
	}
	var num, den float64
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if w != g {
				t.Fatalf("element %d = %v, want %v", i, g, w)
			}
			continue
		}
		if math.IsNaN(g) != math.IsNaN(w) {
			t.Fatalf("element %d = %v, want %v", i, g, w)
		}
		if math.IsNaN(w) {
			continue
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	nmse := num
	if den > 0 {
		nmse = num / den
	}
	if nmse > c.nmse {
		t.Fatalf("NMSE %.3g > %.3g (first elements got %v want %v)", nmse, c.nmse, got[:min(4, len(got))], want[:min(4, len(want))])
	}
}

// TestOpCasesRunOnCPU checks, without a GPU, that every op case builds and
// runs on the CPU backend and that the CUDA backend claims every node in
// it, so that the device check cannot fail on a malformed case.
func TestOpCasesRunOnCPU(t *testing.T) {
	cb := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	defer cb.Close()
	var b Backend // SupportsOp needs no device
	for _, c := range opCases() {
		t.Run(c.name, func(t *testing.T) {
			g, out, _ := buildCase(t, c, cpu.DefaultBufferType())
			for _, n := range g.Nodes() {
				if !b.SupportsOp(n) {
					t.Fatalf("CUDA backend does not claim node %s", n)
				}
			}
			if err := cb.Compute(g); err != nil {
				t.Fatal(err)
			}
			_ = readF32(t, out)
		})
	}
}

// TestBackendtestOps runs the shared op suite (backendtest.RunOps) on the
// GPU with tensors in CUDA0: every case of every op the backend claims.
func TestBackendtestOps(t *testing.T) {
	backendtest.RunOps(t, newTestBackend(t))
}
