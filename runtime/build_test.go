package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestBuildShapes(t *testing.T) {
	type mk func(c *Context) *Tensor
	f32 := func(c *Context, ne ...int64) *Tensor { return c.NewTensor(TypeF32, ne...) }
	i32 := func(c *Context, ne ...int64) *Tensor { return c.NewTensor(TypeI32, ne...) }
	tests := []struct {
		name   string
		build  mk
		op     Op
		typ    Type
		ne     [MaxDims]int64
		isView bool
	}{
		{"dup", func(c *Context) *Tensor { return c.Dup(f32(c, 3, 5)) }, OpDup, TypeF32, [4]int64{3, 5, 1, 1}, false},
		{"cpy", func(c *Context) *Tensor { return c.Cpy(f32(c, 6), c.NewTensor(TypeF16, 2, 3)) }, OpCpy, TypeF16, [4]int64{2, 3, 1, 1}, true},
		{"cont of transpose", func(c *Context) *Tensor { return c.Cont(c.Transpose(f32(c, 3, 5))) }, OpCont, TypeF32, [4]int64{5, 3, 1, 1}, false},
		{"cont4d", func(c *Context) *Tensor { return c.Cont4D(f32(c, 6, 2), 3, 4, 1, 1) }, OpCont, TypeF32, [4]int64{3, 4, 1, 1}, false},
		{"add broadcast", func(c *Context) *Tensor { return c.Add(f32(c, 4, 6, 2), f32(c, 4, 3)) }, OpAdd, TypeF32, [4]int64{4, 6, 2, 1}, false},
		{"add inplace", func(c *Context) *Tensor { return c.AddInplace(f32(c, 4, 6), f32(c, 4)) }, OpAdd, TypeF32, [4]int64{4, 6, 1, 1}, true},
		{"sub", func(c *Context) *Tensor { return c.Sub(f32(c, 4, 6), f32(c, 1, 6)) }, OpSub, TypeF32, [4]int64{4, 6, 1, 1}, false},
		{"mul f16", func(c *Context) *Tensor { return c.Mul(c.NewTensor(TypeF16, 4, 6), f32(c, 4)) }, OpMul, TypeF16, [4]int64{4, 6, 1, 1}, false},
		{"div", func(c *Context) *Tensor { return c.Div(f32(c, 4, 6), f32(c, 4, 6)) }, OpDiv, TypeF32, [4]int64{4, 6, 1, 1}, false},
		{"add1", func(c *Context) *Tensor { return c.Add1(f32(c, 4, 6), f32(c, 1)) }, OpAdd1, TypeF32, [4]int64{4, 6, 1, 1}, false},
		{"scale", func(c *Context) *Tensor { return c.Scale(f32(c, 7), 2) }, OpScale, TypeF32, [4]int64{7, 1, 1, 1}, false},
		{"sqr", func(c *Context) *Tensor { return c.Sqr(f32(c, 7)) }, OpSqr, TypeF32, [4]int64{7, 1, 1, 1}, false},
		{"sqrt inplace", func(c *Context) *Tensor { return c.SqrtInplace(f32(c, 7)) }, OpSqrt, TypeF32, [4]int64{7, 1, 1, 1}, true},
		{"log", func(c *Context) *Tensor { return c.Log(f32(c, 7)) }, OpLog, TypeF32, [4]int64{7, 1, 1, 1}, false},
		{"sum_rows", func(c *Context) *Tensor { return c.SumRows(f32(c, 7, 3, 2)) }, OpSumRows, TypeF32, [4]int64{1, 3, 2, 1}, false},
		{"mean f16", func(c *Context) *Tensor { return c.Mean(c.NewTensor(TypeF16, 7, 3)) }, OpMean, TypeF32, [4]int64{1, 3, 1, 1}, false},
		{"repeat", func(c *Context) *Tensor { return c.Repeat(f32(c, 2, 1, 3), f32(c, 4, 5, 3, 2)) }, OpRepeat, TypeF32, [4]int64{4, 5, 3, 2}, false},
		{"concat dim1", func(c *Context) *Tensor { return c.Concat(f32(c, 3, 2), f32(c, 3, 5), 1) }, OpConcat, TypeF32, [4]int64{3, 7, 1, 1}, false},
		{"norm", func(c *Context) *Tensor { return c.Norm(f32(c, 8, 2), 1e-5) }, OpNorm, TypeF32, [4]int64{8, 2, 1, 1}, false},
		{"rms_norm", func(c *Context) *Tensor { return c.RMSNorm(f32(c, 8, 2), 1e-5) }, OpRmsNorm, TypeF32, [4]int64{8, 2, 1, 1}, false},
		{"mul_mat", func(c *Context) *Tensor { return c.MulMat(c.NewTensor(TypeQ8_0, 64, 5, 2), f32(c, 64, 3, 4, 3)) }, OpMulMat, TypeF32, [4]int64{5, 3, 4, 3}, false},
		{"get_rows", func(c *Context) *Tensor { return c.GetRows(c.NewTensor(TypeQ4_0, 32, 10, 2, 3), i32(c, 4, 2, 3)) }, OpGetRows, TypeF32, [4]int64{32, 4, 2, 3}, false},
		{"get_rows i32", func(c *Context) *Tensor { return c.GetRows(i32(c, 3, 10), i32(c, 4)) }, OpGetRows, TypeI32, [4]int64{3, 4, 1, 1}, false},
		{"diag_mask_inf", func(c *Context) *Tensor { return c.DiagMaskInf(f32(c, 5, 5, 2), 1) }, OpDiagMaskInf, TypeF32, [4]int64{5, 5, 2, 1}, false},
		{"soft_max", func(c *Context) *Tensor { return c.SoftMax(f32(c, 5, 3)) }, OpSoftMax, TypeF32, [4]int64{5, 3, 1, 1}, false},
		{"soft_max_ext", func(c *Context) *Tensor {
			return c.SoftMaxExt(f32(c, 5, 3, 4), c.NewTensor(TypeF16, 5, 8), 0.5, 0)
		}, OpSoftMax, TypeF32, [4]int64{5, 3, 4, 1}, false},
		{"soft_max_back", func(c *Context) *Tensor { return c.SoftMaxBack(f32(c, 5, 3), f32(c, 5, 3)) }, OpSoftMaxBack, TypeF32, [4]int64{5, 3, 1, 1}, false},
		{"rope", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), i32(c, 3), 8, RopeNeoX) }, OpRope, TypeF32, [4]int64{8, 2, 3, 1}, false},
		{"rope_back", func(c *Context) *Tensor {
			return c.RopeBack(f32(c, 8, 2, 3), i32(c, 3), nil, 4, RopeNormal, DefaultRopeParams())
		}, OpRopeBack, TypeF32, [4]int64{8, 2, 3, 1}, false},
		{"gelu", func(c *Context) *Tensor { return c.GELU(f32(c, 5, 3)) }, OpUnary, TypeF32, [4]int64{5, 3, 1, 1}, false},
		{"silu of row view", func(c *Context) *Tensor {
			a := f32(c, 5, 3)
			return c.SILU(c.View2D(a, 4, 3, a.Nb[1], 0))
		}, OpUnary, TypeF32, [4]int64{4, 3, 1, 1}, false},
		{"clamp", func(c *Context) *Tensor { return c.Clamp(f32(c, 5, 3), -1, 1) }, OpClamp, TypeF32, [4]int64{5, 3, 1, 1}, true},
		{"silu_back", func(c *Context) *Tensor { return c.SiluBack(f32(c, 5, 3), f32(c, 5, 3)) }, OpSiluBack, TypeF32, [4]int64{5, 3, 1, 1}, false},
		{"rms_norm_back", func(c *Context) *Tensor { return c.RMSNormBack(f32(c, 5, 3), f32(c, 5, 3), 1e-6) }, OpRmsNormBack, TypeF32, [4]int64{5, 3, 1, 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			r := tc.build(c)
			if err := c.Err(); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if r == nil {
				t.Fatal("nil result without error")
			}
			if r.Op != tc.op || r.Type != tc.typ || r.Ne != tc.ne {
				t.Fatalf("got %s %s %v, want %s %s %v", r.Op, r.Type, r.Ne, tc.op, tc.typ, tc.ne)
			}
			if r.IsView() != tc.isView {
				t.Fatalf("IsView = %v, want %v", r.IsView(), tc.isView)
			}
			if !r.IsView() && r.Nb != ContiguousStrides(r.Type, r.Ne) {
				t.Fatalf("strides %v not contiguous", r.Nb)
			}
			if r.Src[0] == nil {
				t.Fatal("src0 not set")
			}
		})
	}
}

func TestBuildParams(t *testing.T) {
	c := NewContext()
	a := c.NewTensor(TypeF32, 8, 2, 3)
	pos := c.NewTensor(TypeI32, 3)
	p := RopeParams{NCtxOrig: 4096, FreqBase: 500000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 0.9, BetaFast: 32, BetaSlow: 1}
	r := c.RopeExt(a, pos, nil, 6, RopeNeoX, p)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	wantI := []int32{0, 6, RopeNeoX, 0, 4096}
	for i, w := range wantI {
		if r.OpParamI32(i) != w {
			t.Errorf("rope param %d = %d, want %d", i, r.OpParamI32(i), w)
		}
	}
	wantF := []float32{500000, 0.25, 1, 0.9, 32, 1}
	for i, w := range wantF {
		if r.OpParamF32(5+i) != w {
			t.Errorf("rope param %d = %g, want %g", 5+i, r.OpParamF32(5+i), w)
		}
	}
	if r.Src[1] != pos {
		t.Error("rope src1 is not the positions")
	}
	s := c.SoftMaxExt(a, c.NewTensor(TypeF32, 8, 2), 0.125, 8)
	if s.OpParamF32(0) != 0.125 || s.OpParamF32(1) != 8 || s.Src[1] == nil {
		t.Errorf("soft_max_ext params %v src1 %v", s.OpParams[:2], s.Src[1])
	}
	if u := c.SILU(a); u.UnaryOp() != UnarySilu {
		t.Errorf("unary op %s", u.UnaryOp())
	}
	if d := c.DiagMaskInf(a, 3); d.OpParamI32(0) != 3 {
		t.Errorf("n_past %d", d.OpParamI32(0))
	}
	if cc := c.Concat(a, a, 2); cc.OpParamI32(0) != 2 {
		t.Errorf("concat dim %d", cc.OpParamI32(0))
	}
	if cl := c.Clamp(a, -2, 3); cl.OpParamF32(0) != -2 || cl.OpParamF32(1) != 3 || cl.ViewSrc != a {
		t.Errorf("clamp params %v", cl.OpParams[:2])
	}
	b := c.NewTensor(TypeF16, 48)
	b.Name = "dst"
	a.Name = "src"
	cp := c.Cpy(a, b)
	if cp.Src[0] != a || cp.Src[1] != b || cp.ViewSrc != b || cp.Name != "dst (copy of src)" {
		t.Errorf("cpy: src %v %v view of %v name %q", cp.Src[0], cp.Src[1], cp.ViewSrc, cp.Name)
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

func TestBuildErrors(t *testing.T) {
	f32 := func(c *Context, ne ...int64) *Tensor {
		t := c.NewTensor(TypeF32, ne...)
		if t != nil {
			t.Name = "t" + strings.Repeat("x", len(c.Tensors()))
		}
		return t
	}
	i32 := func(c *Context, ne ...int64) *Tensor { return c.NewTensor(TypeI32, ne...) }
	tests := []struct {
		name     string
		build    func(c *Context) *Tensor
		sentinel error
		op       string
	}{
		{"cpy count", func(c *Context) *Tensor { return c.Cpy(f32(c, 4), f32(c, 5)) }, ErrShape, "CPY"},
		{"cont4d count", func(c *Context) *Tensor { return c.Cont4D(f32(c, 4), 5, 1, 1, 1) }, ErrShape, "CONT"},
		{"add no broadcast", func(c *Context) *Tensor { return c.Add(f32(c, 4, 6), f32(c, 3)) }, ErrShape, "ADD"},
		{"mul b bigger", func(c *Context) *Tensor { return c.Mul(f32(c, 4), f32(c, 4, 2)) }, ErrShape, "MUL"},
		{"add1 not scalar", func(c *Context) *Tensor { return c.Add1(f32(c, 4), f32(c, 2)) }, ErrShape, "ADD1"},
		{"scale transposed", func(c *Context) *Tensor { return c.Scale(c.Transpose(f32(c, 4, 3)), 1) }, ErrShape, "SCALE"},
		{"repeat", func(c *Context) *Tensor { return c.Repeat(f32(c, 3), f32(c, 4)) }, ErrShape, "REPEAT"},
		{"concat dim", func(c *Context) *Tensor { return c.Concat(f32(c, 3), f32(c, 3), 4) }, ErrShape, "CONCAT"},
		{"concat shape", func(c *Context) *Tensor { return c.Concat(f32(c, 3, 2), f32(c, 4, 2), 1) }, ErrShape, "CONCAT"},
		{"concat type", func(c *Context) *Tensor { return c.Concat(f32(c, 3), i32(c, 3), 0) }, ErrUnsupported, "CONCAT"},
		{"mul_mat k", func(c *Context) *Tensor { return c.MulMat(f32(c, 4, 3), f32(c, 5, 2)) }, ErrShape, "MUL_MAT"},
		{"mul_mat broadcast", func(c *Context) *Tensor { return c.MulMat(f32(c, 4, 3, 2), f32(c, 4, 2, 3)) }, ErrShape, "MUL_MAT"},
		{"mul_mat transposed", func(c *Context) *Tensor { return c.MulMat(c.Transpose(f32(c, 4, 4)), f32(c, 4, 2)) }, ErrShape, "MUL_MAT"},
		{"get_rows idx type", func(c *Context) *Tensor { return c.GetRows(f32(c, 4, 3), f32(c, 2)) }, ErrUnsupported, "GET_ROWS"},
		{"get_rows shape", func(c *Context) *Tensor { return c.GetRows(f32(c, 4, 3, 2), i32(c, 2, 3)) }, ErrShape, "GET_ROWS"},
		{"get_rows dim 3", func(c *Context) *Tensor { return c.GetRows(f32(c, 4, 3, 2), i32(c, 2, 2, 3)) }, ErrShape, "GET_ROWS"},
		{"diag_mask n_past", func(c *Context) *Tensor { return c.DiagMaskInf(f32(c, 4, 4), -1) }, ErrShape, "DIAG_MASK_INF"},
		{"soft_max noncontig", func(c *Context) *Tensor { return c.SoftMax(c.Transpose(f32(c, 4, 3))) }, ErrShape, "SOFT_MAX"},
		{"soft_max mask cols", func(c *Context) *Tensor { return c.SoftMaxExt(f32(c, 4, 3), f32(c, 5, 3), 1, 0) }, ErrShape, "SOFT_MAX"},
		{"soft_max mask rows", func(c *Context) *Tensor { return c.SoftMaxExt(f32(c, 4, 3), f32(c, 4, 2), 1, 0) }, ErrShape, "SOFT_MAX"},
		{"soft_max mask type", func(c *Context) *Tensor { return c.SoftMaxExt(f32(c, 4, 3), i32(c, 4, 3), 1, 0) }, ErrUnsupported, "SOFT_MAX"},
		{"soft_max alibi no mask", func(c *Context) *Tensor { return c.SoftMaxExt(f32(c, 4, 3), nil, 1, 8) }, ErrShape, "SOFT_MAX"},
		{"soft_max_back shape", func(c *Context) *Tensor { return c.SoftMaxBack(f32(c, 4, 3), f32(c, 4, 2)) }, ErrShape, "SOFT_MAX_BACK"},
		{"rope pos count", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), i32(c, 2), 8, RopeNormal) }, ErrShape, "ROPE"},
		{"rope pos type", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), f32(c, 3), 8, RopeNormal) }, ErrUnsupported, "ROPE"},
		{"rope n_dims", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), i32(c, 3), 10, RopeNormal) }, ErrShape, "ROPE"},
		{"rope odd n_dims", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), i32(c, 3), 3, RopeNormal) }, ErrShape, "ROPE"},
		{"rope mode", func(c *Context) *Tensor { return c.Rope(f32(c, 8, 2, 3), i32(c, 3), 8, 1) }, ErrUnsupported, "ROPE"},
		{"unary noncontig", func(c *Context) *Tensor { return c.GELU(c.Transpose(f32(c, 4, 3))) }, ErrShape, "UNARY"},
		{"unary op", func(c *Context) *Tensor { return c.Unary(f32(c, 4), UnaryCount) }, ErrUnknownOp, "UNARY"},
		{"silu_back", func(c *Context) *Tensor { return c.SiluBack(f32(c, 4), f32(c, 5)) }, ErrShape, "SILU_BACK"},
		{"rms_norm_back", func(c *Context) *Tensor { return c.RMSNormBack(f32(c, 4), f32(c, 5), 1e-5) }, ErrShape, "RMS_NORM_BACK"},
		{"flash_attn_back (ggml aborts)", func(c *Context) *Tensor {
			return c.FlashAttnBack(f32(c, 8, 4, 2), f32(c, 8, 6, 2), f32(c, 6, 8, 2), f32(c, 8, 4, 2), true)
		}, ErrUnsupported, "FLASH_ATTN_BACK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			if r := tc.build(c); r != nil {
				t.Fatalf("got %v, want nil", r)
			}
			err := c.Err()
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("error %v does not wrap %v", err, tc.sentinel)
			}
			if !strings.HasPrefix(err.Error(), tc.op+":") || !strings.Contains(err.Error(), `"tx`) {
				t.Fatalf("error %q does not name op %s and the tensors", err, tc.op)
			}
			// Sticky: further builders return nil.
			if c.Add(f32(c, 1), f32(c, 1)) != nil {
				t.Fatal("builder returned a tensor after an error")
			}
		})
	}
}

func TestBuildNilSource(t *testing.T) {
	c := NewContext()
	if c.MulMat(nil, c.NewTensor(TypeF32, 4)) != nil || c.Err() != nil {
		t.Fatalf("nil source: want nil result and no error, got err %v", c.Err())
	}
}
