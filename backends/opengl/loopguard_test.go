//go:build opengl

package opengl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestOpsMulMatLoopGuard runs MUL_MAT and MUL_MAT_ID at the longest k the
// planner takes for each weight type (mulMatKLimit), one result column
// (the kernel's TN 1, whose loops the guard stops soonest) and five: a
// Mesa whose llvmpipe stops invocations sooner makes these sums come back
// short instead of passing silently in use. The bound is ggml's for
// MUL_MAT (5e-4): the CPU reference rounds activations to q8_0/q8_K, the
// GL kernel keeps them f32, while a sum cut short misses whole blocks
// (NMSE above 1e-2 in the probes). Under the race detector the CPU
// reference takes over a minute for all types, so that run keeps f32 and
// q3_K; make test-opengl runs the rest without it (its TestOps pass).
func TestOpsMulMatLoopGuard(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32 := runtime.TypeF32
	var cases []opCase
	types := []runtime.Type{f32, runtime.TypeF16, runtime.TypeBF16, runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0,
		runtime.TypeQ5_1, runtime.TypeQ8_0, runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K}
	if raceEnabled {
		types = []runtime.Type{f32, runtime.TypeQ3_K}
	}
	for _, typ := range types {
		k := mulMatKLimit(typ) / typ.BlockSize() * typ.BlockSize()
		for _, n := range []int64{1, 5} {
			cases = append(cases, opCase{name: fmt.Sprintf("mul_mat_%s_k%d_n%d", typ, k, n), build: func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(in(c, typ, "a", k, 4), in(c, f32, "b", k, n))
			}, tol: 5e-4})
		}
		if typ == runtime.TypeQ3_K || typ == f32 {
			cases = append(cases, opCase{name: fmt.Sprintf("mul_mat_id_%s_k%d", typ, k), build: func(c *runtime.Context) *runtime.Tensor {
				return c.MulMatId(in(c, typ, "a", k, 4, 2), in(c, f32, "b", k, 1, 2), in(c, runtime.TypeI32, "ids", 2, 2))
			}, fill: rowsFill(2), tol: 5e-4})
		}
	}
	checkCases(t, b, cases)
}

// TestOpsFlashAttnLoopGuard runs FLASH_ATTN_EXT at the most keys the
// planner takes for each kernel: flash_attn.comp (one loop iteration per
// key, faIters) with its largest unrolled heads, and flash_attn_wide.comp
// (faWideIters at most faMaxIters) with the largest heads (576-element
// keys, 512-element values: the most loop iterations per key). An
// invocation that llvmpipe's guard stopped early would leave keys out of
// the sum. The wide kernel's work group walks 26176 keys, half a minute on
// llvmpipe, so the race-detector run skips the test (make test-opengl
// runs it without).
func TestOpsFlashAttnLoopGuard(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector; make test-opengl runs it without")
	}
	b := open(t, Config{Upload: UploadSubData})
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	var cases []opCase
	for _, hs := range [][2]int64{{faUnrolled / 2, faUnrolled / 2}, {faWideMaxDK, faWideMaxDV}} {
		dk, dv := hs[0], hs[1]
		iters := func(nkv int64) int64 {
			if dk+dv <= faUnrolled {
				return faIters(nkv)
			}
			return faWideIters(dk, dv, nkv)
		}
		lo, hi := int64(1), int64(1<<20)
		for lo < hi { // the largest nkv within the planner's bound
			m := (lo + hi + 1) / 2
			if iters(m) <= faMaxIters {
				lo = m
			} else {
				hi = m - 1
			}
		}
		cases = append(cases, opCase{name: fmt.Sprintf("flash_attn_dk%d_kv%d", dk, lo), build: func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(in(c, f32, "q", dk, 1, 1), in(c, f16, "k", dk, lo, 1), in(c, f16, "v", dv, lo, 1), nil, 0.125, 0, 0)
		}, tol: 5e-4})
	}
	checkCases(t, b, cases)
}

// seqLargest is the largest n in [1, hi] whose node, built by mk, the
// seq.comp planner still takes by its loop bound (seqIters at most
// seqMaxIters, which grows with n).
func seqLargest(t *testing.T, hi int64, mk func(c *runtime.Context, n int64) *runtime.Tensor) int64 {
	t.Helper()
	lo := int64(1)
	for lo < hi {
		m := (lo + hi + 1) / 2
		c := runtime.NewContext()
		if x := mk(c, m); x != nil && seqIters(x) <= seqMaxIters {
			lo = m
		} else {
			hi = m - 1
		}
	}
	c := runtime.NewContext()
	if x := mk(c, lo+1); x == nil || seqIters(x) <= seqMaxIters {
		t.Fatalf("bound not reached below %d", lo+1)
	}
	return lo
}

// TestOpsSeqLoopGuard runs the scans and solvers of seq.comp at the most
// tokens (rows, heads) the planner takes for the largest state rows: an
// invocation that llvmpipe's guard stopped early would leave tokens out
// of the state and the outputs after them unwritten.
func TestOpsSeqLoopGuard(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector; make test-opengl runs it without")
	}
	b := open(t, Config{Upload: UploadSubData})
	f32 := runtime.TypeF32
	ssm := func(nc int64) func(c *runtime.Context, nt int64) *runtime.Tensor {
		return func(c *runtime.Context, nt int64) *runtime.Tensor {
			return c.SsmScan(in(c, f32, "s", nc, 2, 1, 1), in(c, f32, "x", 2, 1, nt, 1), in(c, f32, "dt", 1, nt, 1),
				in(c, f32, "A", 1, 1), in(c, f32, "B", nc, 1, nt, 1), in(c, f32, "C", nc, 1, nt, 1), in(c, runtime.TypeI32, "ids", 1), 1)
		}
	}
	gdn := func(S, gn int64) func(c *runtime.Context, T int64) *runtime.Tensor {
		return func(c *runtime.Context, T int64) *runtime.Tensor {
			return c.GatedDeltaNet(in(c, f32, "q", S, 1, T, 1), in(c, f32, "k", S, 1, T, 1), in(c, f32, "v", S, 1, T, 1),
				in(c, f32, "g", gn, 1, T, 1), in(c, f32, "beta", 1, 1, T, 1), in(c, f32, "state", S, S, 1, 1), 1)
		}
	}
	wkv7 := func(c *runtime.Context, T int64) *runtime.Tensor {
		tok := func(name string) *runtime.Tensor { return in(c, f32, name, 256, 1, T) }
		return c.RwkvWkv7(tok("r"), tok("w"), tok("k"), tok("v"), tok("a"), tok("b"), in(c, f32, "state", 256*256, 1))
	}
	solve := func(c *runtime.Context, n int64) *runtime.Tensor {
		return c.SolveTri(in(c, f32, "a", n, n, 1, 1), in(c, f32, "b", 2, n, 1, 1), true, true, false)
	}
	li := func(c *runtime.Context, nh int64) *runtime.Tensor {
		return c.LightningIndexer(in(c, f32, "q", 512, nh, 1, 1), in(c, f32, "k", 512, 1, 2, 1), in(c, f32, "w", nh, 1, 1, 1),
			in(c, runtime.TypeF16, "mask", 2, 1, 1, 1))
	}
	var cases []opCase
	for _, g := range []struct {
		name string
		hi   int64
		mk   func(c *runtime.Context, n int64) *runtime.Tensor
		tol  float64
	}{{"ssm_scan_nc256_nt", 1 << 16, ssm(256), 1e-6}, {"ssm_scan_nc128_nt", 1 << 16, ssm(128), 1e-6}, {"ssm_scan_nc13_nt", 1 << 16, ssm(13), 1e-6},
		{"gated_delta_net_S256_T", 1 << 16, gdn(256, 256), 1e-6}, {"gated_delta_net_S128_T", 1 << 16, gdn(128, 1), 1e-6},
		{"gated_delta_net_S40_T", 1 << 16, gdn(40, 40), 1e-6}, {"rwkv_wkv7_T", 1 << 16, wkv7, 1e-6},
		{"solve_tri_n", 4096, solve, 1e-6}, {"lightning_indexer_nh", 1 << 16, li, 1e-6}} {
		n := seqLargest(t, g.hi, g.mk)
		cases = append(cases, opCase{name: fmt.Sprintf("%s%d", g.name, n), build: func(c *runtime.Context) *runtime.Tensor { return g.mk(c, n) },
			fill: func(tt *runtime.Tensor, _ int, r *rand.Rand) []byte {
				switch {
				case tt.Name == "ids":
					return make([]byte, 4)
				case g.name == "solve_tri_n" && tt.Name == "a": // a well-conditioned lower triangle
					f := make([]float32, tt.Nelements())
					for i := range f {
						if col, row := int64(i)%n, int64(i)/n; col == row {
							f[i] = 1
						} else if col < row {
							f[i] = (r.Float32() - 0.5) / float32(n)
						}
					}
					return encode(f32, f)
				case tt.Name == "g" || tt.Name == "dt" || tt.Name == "A" || (g.name == "rwkv_wkv7_T" && tt.Name == "w"):
					return randomBytes(tt, r, -0.1, 0) // decays that keep long scans bounded
				case (strings.HasPrefix(g.name, "gated_delta_net") && tt.Name == "k") || (g.name == "rwkv_wkv7_T" && (tt.Name == "a" || tt.Name == "b")):
					return randomBytes(tt, r, -0.01, 0.01)
				}
				return nil
			}, tol: g.tol})
	}
	checkCases(t, b, cases)
}
