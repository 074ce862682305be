//go:build opengl

package opengl

import (
	"fmt"
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
