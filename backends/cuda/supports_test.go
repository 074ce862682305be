package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestSupportsOpRefuses checks, without a device, that SupportsOp refuses
// the variants of the claimed ops that the kernels do not implement, and
// claims their plain forms.
func TestSupportsOpRefuses(t *testing.T) {
	F32, F16 := runtime.TypeF32, runtime.TypeF16
	tests := []struct {
		name  string
		want  bool
		build func(c *runtime.Context) *runtime.Tensor
	}{
		{"xielu", false, func(c *runtime.Context) *runtime.Tensor { return c.Xielu(c.NewTensor(F32, 8), 0.8, 0.8, 0.5, -1e-6) }},
		{"gelu_erf_f16", true, func(c *runtime.Context) *runtime.Tensor {
			return c.Unary(c.NewTensor(F16, 8), runtime.UnaryGeluErf)
		}},
		{"pad_circular", false, func(c *runtime.Context) *runtime.Tensor {
			return c.PadExtCircular(c.NewTensor(F32, 7, 5), 1, 1, 0, 0, 0, 0, 0, 0)
		}},
		{"pad", true, func(c *runtime.Context) *runtime.Tensor {
			return c.PadExt(c.NewTensor(F32, 7, 5), 1, 1, 0, 2, 0, 0, 0, 0)
		}},
		{"set_rows_q8_0", true, func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor(runtime.TypeQ8_0, 64, 8), c.NewTensor(F32, 64, 2), c.NewTensor(runtime.TypeI32, 2))
		}},
		{"set_rows_q4_K", false, func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor(runtime.TypeQ4_K, 256, 8), c.NewTensor(F32, 256, 2), c.NewTensor(runtime.TypeI32, 2))
		}},
		{"cpy_f32_q4_0", true, func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor(F32, 64, 3), c.NewTensor(runtime.TypeQ4_0, 64, 3))
		}},
		{"cpy_f32_q4_0_partial_block", false, func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor(F32, 16, 4), c.NewTensor(runtime.TypeQ4_0, 64, 1))
		}},
		{"set_rows_f16_i64", true, func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor(F16, 64, 8), c.NewTensor(F32, 64, 2), c.NewTensor(runtime.TypeI64, 2))
		}},
		{"argsort_too_long", false, func(c *runtime.Context) *runtime.Tensor {
			return c.Argsort(c.NewTensor(F32, argsortMaxCols+1), runtime.SortDesc)
		}},
		{"flash_attn_q8_0_k", true, func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(c.NewTensor(F32, 64, 3, 4), c.NewTensor(runtime.TypeQ8_0, 64, 9, 2),
				c.NewTensor(F16, 64, 9, 2), nil, 0.125, 0, 0)
		}},
		{"flash_attn_iq4_nl_k", false, func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(c.NewTensor(F32, 64, 3, 4), c.NewTensor(runtime.TypeIQ4_NL, 64, 9, 2),
				c.NewTensor(F16, 64, 9, 2), nil, 0.125, 0, 0)
		}},
		{"flash_attn_dv_too_large", false, func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(c.NewTensor(F32, 64, 3, 4), c.NewTensor(F16, 64, 9, 2),
				c.NewTensor(F16, 4*faThreads+2, 9, 2), nil, 0.125, 0, 0)
		}},
		{"flash_attn_gqa_q4_0_v", true, func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(c.NewTensor(F32, 64, 3, 4), c.NewTensor(F16, 64, 9, 2),
				c.NewTensor(runtime.TypeQ4_0, 64, 9, 2), nil, 0.125, 0, 0)
		}},
		{"rope_mrope", true, func(c *runtime.Context) *runtime.Tensor {
			return c.RopeMulti(c.NewTensor(F32, 32, 3, 5), c.NewTensor(runtime.TypeI32, 20), nil, 32,
				[runtime.MropeSections]int32{8, 4, 4, 0}, runtime.RopeMrope, runtime.DefaultRopeParams())
		}},
		{"rope_mrope_bf16", false, func(c *runtime.Context) *runtime.Tensor {
			return c.RopeMulti(c.NewTensor(runtime.TypeBF16, 32, 3, 5), c.NewTensor(runtime.TypeI32, 20), nil, 32,
				[runtime.MropeSections]int32{8, 4, 4, 0}, runtime.RopeMrope, runtime.DefaultRopeParams())
		}},
		{"mul_mat_id_q4_K", true, func(c *runtime.Context) *runtime.Tensor {
			return c.MulMatId(c.NewTensor(runtime.TypeQ4_K, 256, 9, 4), c.NewTensor(F32, 256, 2, 3), c.NewTensor(runtime.TypeI32, 2, 3))
		}},
	}
	var b Backend // SupportsOp needs no device
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := runtime.NewContext()
			out := tc.build(c)
			if c.Err() != nil {
				t.Fatalf("build: %v", c.Err())
			}
			if got := b.SupportsOp(out); got != tc.want {
				t.Fatalf("SupportsOp(%s) = %v, want %v", out, got, tc.want)
			}
		})
	}
}

// TestEmulatedBadIDs checks that an out-of-range index of SET_ROWS,
// ADD_ID, MUL_MAT_ID and SSM_SCAN (a sequence id) is an error wrapping runtime.ErrOutOfBounds that
// names it, and that the backend computes normally afterwards.
func TestEmulatedBadIDs(t *testing.T) {
	b := newEmuBackend(t)
	F32 := runtime.TypeF32
	for _, tc := range []struct {
		name  string
		build func(c *runtime.Context) *runtime.Tensor
		ids   func(out *runtime.Tensor) *runtime.Tensor
	}{
		{"set_rows", func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor(F32, 8, 4), c.NewTensor(F32, 8, 3), c.NewTensor(runtime.TypeI32, 3))
		}, func(o *runtime.Tensor) *runtime.Tensor { return o.Src[1] }},
		{"add_id", func(c *runtime.Context) *runtime.Tensor {
			return c.AddId(c.NewTensor(F32, 8, 3), c.NewTensor(F32, 8, 4), c.NewTensor(runtime.TypeI32, 3))
		}, func(o *runtime.Tensor) *runtime.Tensor { return o.Src[2] }},
		{"mul_mat_id", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMatId(c.NewTensor(F32, 8, 5, 4), c.NewTensor(F32, 8, 3), c.NewTensor(runtime.TypeI32, 3))
		}, func(o *runtime.Tensor) *runtime.Tensor { return o.Src[2] }},
		{"ssm_scan", func(c *runtime.Context) *runtime.Tensor {
			return c.SsmScan(c.NewTensor(F32, 16, 8, 4, 3), c.NewTensor(F32, 8, 4, 5, 3), c.NewTensor(F32, 4, 5, 3),
				c.NewTensor(F32, 1, 4), c.NewTensor(F32, 16, 2, 5, 3), c.NewTensor(F32, 16, 2, 5, 3), c.NewTensor(runtime.TypeI32, 3), 1)
		}, func(o *runtime.Tensor) *runtime.Tensor { return o.Src[6] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, out, _ := buildCase(t, opCase{name: tc.name, idx: 3, build: tc.build}, b.DeviceBufferType())
			ids := tc.ids(out)
			if err := runtime.SetTensorData(ids, []byte{1, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0}, 0); err != nil {
				t.Fatal(err)
			}
			err := b.Compute(g)
			if !errors.Is(err, runtime.ErrOutOfBounds) || !strings.Contains(err.Error(), "7") {
				t.Fatalf("Compute = %v, want an out-of-bounds error naming index 7", err)
			}
			if err := runtime.SetTensorData(ids, []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}, 0); err != nil {
				t.Fatal(err)
			}
			if err := b.Compute(g); err != nil {
				t.Fatalf("Compute after the bad index: %v", err)
			}
		})
	}
}
