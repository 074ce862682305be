package opengl

import (
	"errors"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestPlan checks the node-to-kernel mapping that SupportsOp reports,
// without a GL device (it runs in every build).
func TestPlan(t *testing.T) {
	f32, f16, i32 := runtime.TypeF32, runtime.TypeF16, runtime.TypeI32
	tests := []struct {
		name   string
		build  func(c *runtime.Context) *runtime.Tensor
		kernel string // "" with ok: a view (no kernel)
		ok     bool
		dense  bool
	}{
		{"view", func(c *runtime.Context) *runtime.Tensor { return c.Transpose(c.NewTensor2D(f32, 4, 3)) }, "", true, false},
		{"add dense", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor2D(f32, 4, 3), c.NewTensor1D(f32, 4))
		}, "binary", true, true},
		{"add broadcast rows", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor2D(f32, 4, 3), c.NewTensor2D(f32, 1, 3))
		}, "binary", true, false},
		{"add f16", func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.NewTensor2D(f16, 4, 3), c.NewTensor1D(f32, 4))
		}, "binary", true, false},
		{"silu", func(c *runtime.Context) *runtime.Tensor { return c.SILU(c.NewTensor1D(f32, 9)) }, "unary", true, true},
		{"diag mask", func(c *runtime.Context) *runtime.Tensor { return c.DiagMaskInf(c.NewTensor2D(f32, 4, 4), 0) }, "unary", true, false},
		{"soft_max", func(c *runtime.Context) *runtime.Tensor { return c.SoftMax(c.NewTensor2D(f32, 4, 4)) }, "rows", true, false},
		{"soft_max row past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMax(c.NewTensor1D(f32, maxRowsKernelRow+1))
		}, "", false, false},
		{"rms_norm row past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.RMSNorm(c.NewTensor1D(f32, maxRowsKernelRow+1), 1e-6)
		}, "", false, false},
		{"sum_rows row past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.SumRows(c.NewTensor1D(f32, maxRowsKernelRow+1))
		}, "", false, false},
		{"mul_mat q3_K k past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			k := mulMatKLimit(runtime.TypeQ3_K) + 256
			return c.MulMat(c.NewTensor2D(runtime.TypeQ3_K, k, 1), c.NewTensor2D(f32, k, 1))
		}, "", false, false},
		{"mul_mat f32 k past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor2D(f32, maxLoop+1, 4), c.NewTensor2D(f32, maxLoop+1, 1))
		}, "", false, false},
		{"mul_mat f32 k at the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor2D(f32, maxLoop, 4), c.NewTensor2D(f32, maxLoop, 1))
		}, "mul_mat", true, false},
		{"mul_mat_id q4_K", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMatId(c.NewTensor3D(runtime.TypeQ4_K, 256, 8, 4), c.NewTensor3D(f32, 256, 2, 3), c.NewTensor2D(i32, 2, 3))
		}, "mul_mat", true, false},
		{"mul_mat_id q4_K k past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			k := mulMatKLimit(runtime.TypeQ4_K) + 256
			return c.MulMatId(c.NewTensor3D(runtime.TypeQ4_K, k, 8, 4), c.NewTensor3D(f32, k, 2, 3), c.NewTensor2D(i32, 2, 3))
		}, "", false, false},
		{"sum past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.Sum(c.NewTensor2D(f32, reduceLocal, maxLoop+1))
		}, "", false, false},
		{"count_equal", func(c *runtime.Context) *runtime.Tensor {
			return c.CountEqual(c.NewTensor2D(i32, 7, 3), c.NewTensor2D(i32, 7, 3))
		}, "reduce", true, false},
		{"pool_2d window past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.Pool2D(c.NewTensor2D(f32, 400, 400), runtime.PoolAvg, 300, 300, 1, 1, 0, 0)
		}, "", false, false},
		{"upscale bicubic", func(c *runtime.Context) *runtime.Tensor {
			return c.Upscale(c.NewTensor2D(f32, 4, 4), 2, runtime.ScaleBicubic)
		}, "spatial", true, false},
		{"upscale nearest antialias", func(c *runtime.Context) *runtime.Tensor {
			return c.Upscale(c.NewTensor2D(f32, 4, 4), 2, runtime.ScaleNearest|runtime.ScaleAntialias)
		}, "", false, false},
		{"out_prod k past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.OutProd(c.NewTensor2D(f32, 2, maxLoop+1), c.NewTensor2D(f32, 2, maxLoop+1))
		}, "", false, false},
		{"conv_2d", func(c *runtime.Context) *runtime.Tensor {
			return c.Conv2DDirect(c.NewTensor4D(f16, 3, 3, 4, 2), c.NewTensor4D(f32, 8, 8, 4, 1), 1, 1, 0, 0, 1, 1)
		}, "spatial", true, false},
		{"conv_2d channels past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.Conv2DDirect(c.NewTensor4D(f32, 3, 3, 6000, 2), c.NewTensor4D(f32, 8, 8, 6000, 1), 1, 1, 0, 0, 1, 1)
		}, "", false, false},
		{"cross_entropy_loss", func(c *runtime.Context) *runtime.Tensor {
			return c.CrossEntropyLoss(c.NewTensor2D(f32, 10, 3), c.NewTensor2D(f32, 10, 3))
		}, "rows", true, false},
		{"cross_entropy_loss past the loop guard", func(c *runtime.Context) *runtime.Tensor {
			return c.CrossEntropyLoss(c.NewTensor2D(f32, 10, 3000), c.NewTensor2D(f32, 10, 3000))
		}, "", false, false},
		{"diag_mask_zero", func(c *runtime.Context) *runtime.Tensor { return c.DiagMaskZero(c.NewTensor2D(f32, 4, 4), 0) }, "unary", true, false},
		{"mul_mat q4_0", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor2D(runtime.TypeQ4_0, 64, 3), c.NewTensor2D(f32, 64, 2))
		}, "mul_mat", true, false},
		{"get_rows", func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(c.NewTensor2D(runtime.TypeQ8_0, 32, 3), c.NewTensor1D(i32, 2))
		}, "get_rows", true, false},
		{"rope", func(c *runtime.Context) *runtime.Tensor {
			return c.Rope(c.NewTensor3D(f32, 8, 2, 3), c.NewTensor1D(i32, 3), 8, runtime.RopeNeoX)
		}, "rope", true, false},
		{"cpy to q8_0", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor1D(f32, 32), c.NewTensor1D(runtime.TypeQ8_0, 32))
		}, "quant", true, false},
		{"cpy q4_0 to q8_0", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor1D(runtime.TypeQ4_0, 32), c.NewTensor1D(runtime.TypeQ8_0, 32))
		}, "", false, false},
		{"mul_mat q4_K", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor2D(runtime.TypeQ4_K, 256, 3), c.NewTensor2D(f16, 256, 2))
		}, "mul_mat", true, false},
		{"mul_mat iq4_nl", func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(c.NewTensor2D(runtime.TypeIQ4_NL, 64, 3), c.NewTensor2D(f32, 64, 2))
		}, "", false, false},
		{"get_rows q5_1", func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(c.NewTensor2D(runtime.TypeQ5_1, 32, 3), c.NewTensor1D(i32, 2))
		}, "get_rows", true, false},
		{"cpy to q6_K", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor2D(runtime.TypeBF16, 256, 2), c.NewTensor2D(runtime.TypeQ6_K, 256, 2))
		}, "quant_k", true, false},
		{"cpy q3_K to f16", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor1D(runtime.TypeQ3_K, 256), c.NewTensor1D(f16, 256))
		}, "quant", true, false},
		{"cpy to i32", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor2D(f32, 4, 3), c.NewTensor2D(i32, 4, 3))
		}, "quant", true, false},
		{"cpy f16 to i32", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor2D(f16, 4, 3), c.NewTensor2D(i32, 4, 3))
		}, "", false, false},
		{"cpy to mxfp4", func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.NewTensor1D(f32, 32), c.NewTensor1D(runtime.TypeMXFP4, 32))
		}, "", false, false},
		{"gelu_quick", func(c *runtime.Context) *runtime.Tensor {
			return c.Unary(c.NewTensor1D(f32, 4), runtime.UnaryGeluQuick)
		}, "unary", true, true},
		{"timestep_embedding", func(c *runtime.Context) *runtime.Tensor {
			return c.TimestepEmbedding(c.NewTensor1D(f32, 4), 8, 10000)
		}, "spatial", true, false},
		{"set_rows f16 i64", func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor2D(f16, 8, 5), c.NewTensor2D(f32, 8, 2), c.NewTensor1D(runtime.TypeI64, 2))
		}, "set_rows", true, false},
		{"set_rows q8_0", func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor2D(runtime.TypeQ8_0, 32, 5), c.NewTensor2D(f32, 32, 2), c.NewTensor1D(i32, 2))
		}, "set_rows", true, false},
		{"set_rows q4_K", func(c *runtime.Context) *runtime.Tensor {
			return c.SetRows(c.NewTensor2D(runtime.TypeQ4_K, 256, 5), c.NewTensor2D(f32, 256, 2), c.NewTensor1D(i32, 2))
		}, "", false, false},
		{"swiglu split", func(c *runtime.Context) *runtime.Tensor {
			return c.GluSplit(c.NewTensor2D(f32, 8, 5), c.NewTensor2D(f32, 8, 5), runtime.GluSwiglu)
		}, "glu", true, false},
		{"rope vision", func(c *runtime.Context) *runtime.Tensor {
			return c.RopeMulti(c.NewTensor3D(f32, 8, 2, 3), c.NewTensor1D(i32, 12), nil, 4, [runtime.MropeSections]int32{1, 1, 0, 0},
				runtime.RopeVision, runtime.DefaultRopeParams())
		}, "rope", true, false},
		{"rope multi short positions", func(c *runtime.Context) *runtime.Tensor {
			r := c.RopeMulti(c.NewTensor3D(f32, 8, 2, 3), c.NewTensor1D(i32, 12), nil, 8, [runtime.MropeSections]int32{2, 1, 1, 0},
				runtime.RopeMrope, runtime.DefaultRopeParams())
			r.Src[1] = c.NewTensor1D(i32, 3)
			return r
		}, "", false, false},
		{"sum", func(c *runtime.Context) *runtime.Tensor {
			x := c.NewTensor1D(f32, 4)
			return c.NewOp(runtime.OpSum, f32, [4]int64{1, 1, 1, 1}, x)
		}, "reduce", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := runtime.NewContext()
			n := tc.build(c)
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			l, err := plan(n)
			if !tc.ok {
				if !errors.Is(err, runtime.ErrUnsupported) {
					t.Fatalf("plan = %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.kernel == "" {
				if l != nil {
					t.Fatalf("view got kernel %s", l.kernel)
				}
				return
			}
			if l.kernel != tc.kernel || l.dense != tc.dense {
				t.Fatalf("kernel %s dense %v, want %s dense %v", l.kernel, l.dense, tc.kernel, tc.dense)
			}
			if l.groups(n) == 0 {
				t.Fatal("no work groups")
			}
			p := l.params(n)
			if p[0] != uint32(n.Type) || p[2] != uint32(n.Ne[0]) {
				t.Fatalf("descriptor of the result: %v", p[:10])
			}
		})
	}
	if _, err := plan(nil); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("plan(nil) = %v", err)
	}
}

func TestUploadModeString(t *testing.T) {
	for m, want := range map[UploadMode]string{UploadAuto: "auto", UploadSubData: "subdata", UploadMapped: "mapped", 7: "upload(7)"} {
		if m.String() != want {
			t.Errorf("%d: %q, want %q", int(m), m.String(), want)
		}
	}
}
