package runtime

import "fmt"

// Builders of ops ggml added after the seed's set: GLU, SET_ROWS, SUM,
// SIN, COS, L2_NORM, ARGSORT, TOP_K, ADD_ID and soft_max's sinks, with
// ggml 0.27.0's shape rules and op-parameter layout.

func (c *Context) glu(a, b *Tensor, g GluOp, swapped bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if g < 0 || g >= GluCount {
		return c.opErr(OpGlu, ErrUnknownOp, fmt.Sprintf("glu function %d", int32(g)), a)
	}
	if !a.IsContiguous1() {
		return c.opErr(OpGlu, ErrShape, "a's rows and dimensions above 1 must be dense", a)
	}
	ne := a.Ne
	if b != nil {
		if !b.IsContiguous1() || !SameShape(a, b) || a.Type != b.Type {
			return c.opErr(OpGlu, ErrShape, "b must be dense like a, of a's shape and type", a, b)
		}
	} else {
		ne[0] /= 2
		if ne[0] < 1 {
			return c.opErr(OpGlu, ErrShape, "a's rows are too short to halve", a)
		}
	}
	t := c.NewOp(OpGlu, a.Type, ne, a)
	if t == nil {
		return nil
	}
	t.Src[1] = b
	t.SetOpParamI32(0, int32(g))
	if swapped {
		t.SetOpParamI32(1, 1)
	}
	return t
}

// Glu applies gated linear unit g to the rows of a: the first half of each
// row is activated and multiplied by the second (the gate), or the other
// way round when swapped; the result has rows half as long (ggml_glu). Op
// parameters: int32 g, swapped.
func (c *Context) Glu(a *Tensor, g GluOp, swapped bool) *Tensor { return c.glu(a, nil, g, swapped) }

// GluSplit is Glu with the activated values in a and the gate in b, of
// one shape (ggml_glu_split).
func (c *Context) GluSplit(a, b *Tensor, g GluOp) *Tensor {
	if !c.ok(b) {
		return nil
	}
	return c.glu(a, b, g, false)
}

// Swiglu is Glu with SiLU (ggml_swiglu).
func (c *Context) Swiglu(a *Tensor) *Tensor { return c.glu(a, nil, GluSwiglu, false) }

// SwigluSplit is GluSplit with SiLU (ggml_swiglu_split).
func (c *Context) SwigluSplit(a, b *Tensor) *Tensor { return c.GluSplit(a, b, GluSwiglu) }

// Geglu is Glu with GELU (ggml_geglu).
func (c *Context) Geglu(a *Tensor) *Tensor { return c.glu(a, nil, GluGeglu, false) }

// Reglu is Glu with ReLU (ggml_reglu).
func (c *Context) Reglu(a *Tensor) *Tensor { return c.glu(a, nil, GluReglu, false) }

// SwigluOai is GPT-OSS's clamped SwiGLU: x = min(a, limit), y =
// clamp(b, -limit, limit), result x·sigmoid(alpha·x)·(y + 1); b nil takes
// both from a's halves. alpha and limit are float32 op parameters 2 and 3
// (ggml_swiglu_oai).
func (c *Context) SwigluOai(a, b *Tensor, alpha, limit float32) *Tensor {
	t := c.glu(a, b, GluSwigluOai, false)
	if t != nil {
		t.SetOpParamF32(2, alpha)
		t.SetOpParamF32(3, limit)
	}
	return t
}

// SwigluClamp is SwiGLU with the activated values clamped from above and
// the gate on both sides by limit before the product: silu(min(a,
// limit))·clamp(b, -limit, limit); limit is float32 op parameter 3
// (ggml_swiglu_clamp).
func (c *Context) SwigluClamp(a, b *Tensor, limit float32) *Tensor {
	t := c.glu(a, b, GluSwigluClamp, false)
	if t != nil {
		t.SetOpParamF32(3, limit)
	}
	return t
}

// SetRows writes the rows of b into a: row i of matrix (i2, i3) of b goes
// to row c[i, i2 % c.ne1, i3 % c.ne2] of the same matrix of a, converted to
// a's type. b is f32 or f16, c holds i64 or i32 row ids with c.ne0 ==
// b.ne1. The result is a view of a (ggml_set_rows; src0 = b, src1 = c,
// src2 = a, as ggml orders them).
func (c *Context) SetRows(a, b, ids *Tensor) *Tensor {
	if !c.ok(a, b, ids) {
		return nil
	}
	if a.Ne[0] != b.Ne[0] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] || b.Ne[1] != ids.Ne[0] ||
		b.Ne[2]%ids.Ne[1] != 0 || b.Ne[3]%ids.Ne[2] != 0 || ids.Ne[3] != 1 {
		return c.opErr(OpSetRows, ErrShape, "want a.ne0,2,3 == b's, b.ne1 == c.ne0, b.ne2,3 multiples of c.ne1,2, c.ne3 == 1", a, b, ids)
	}
	if b.Type != TypeF32 && b.Type != TypeF16 {
		return c.opErr(OpSetRows, ErrUnsupported, "b must be f32 or f16", a, b, ids)
	}
	if ids.Type != TypeI64 && ids.Type != TypeI32 {
		return c.opErr(OpSetRows, ErrUnsupported, "row ids c must be i64 or i32", a, b, ids)
	}
	if !a.IsContiguousRows() || !b.IsContiguousRows() {
		return c.opErr(OpSetRows, ErrShape, "a's and b's rows must be dense", a, b, ids)
	}
	t := c.newView(a, OpSetRows, a.Ne, a.Nb, 0, " (set rows)")
	if t == nil {
		return nil
	}
	t.Src[0], t.Src[1], t.Src[2] = b, ids, a
	return t
}

// Sum adds all elements of a into a one-element tensor of a's type
// (ggml_sum).
func (c *Context) Sum(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.NewOp(OpSum, a.Type, [MaxDims]int64{1, 1, 1, 1}, a)
}

// Sin applies sin element-wise (ggml_sin).
func (c *Context) Sin(a *Tensor) *Tensor { return c.elementwise(OpSin, a, false) }

// SinInplace is Sin writing into a's memory.
func (c *Context) SinInplace(a *Tensor) *Tensor { return c.elementwise(OpSin, a, true) }

// Cos applies cos element-wise (ggml_cos).
func (c *Context) Cos(a *Tensor) *Tensor { return c.elementwise(OpCos, a, false) }

// CosInplace is Cos writing into a's memory.
func (c *Context) CosInplace(a *Tensor) *Tensor { return c.elementwise(OpCos, a, true) }

// L2Norm divides each row of a by max(‖row‖₂, eps); eps is float32 op
// parameter 0 (ggml_l2_norm).
func (c *Context) L2Norm(a *Tensor, eps float32) *Tensor { return c.normLike(OpL2Norm, a, eps, false) }

// L2NormInplace is L2Norm writing into a's memory.
func (c *Context) L2NormInplace(a *Tensor, eps float32) *Tensor {
	return c.normLike(OpL2Norm, a, eps, true)
}

// Sort orders of Argsort (ggml_sort_order), op parameter 0.
const (
	SortAsc  int32 = 0
	SortDesc int32 = 1
)

// Argsort returns, per row of a, the i32 indices that sort the row in
// order SortAsc or SortDesc (ggml_argsort).
func (c *Context) Argsort(a *Tensor, order int32) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if order != SortAsc && order != SortDesc {
		return c.opErr(OpArgsort, ErrUnsupported, fmt.Sprintf("sort order %d", order), a)
	}
	if a.Ne[0] > 1<<31-1 {
		return c.opErr(OpArgsort, ErrShape, "rows longer than INT32_MAX", a)
	}
	t := c.NewOp(OpArgsort, TypeI32, a.Ne, a)
	if t != nil {
		t.SetOpParamI32(0, order)
	}
	return t
}

// TopK returns, per row of a, the i32 indices of its k largest elements
// in unspecified order (ggml_top_k).
func (c *Context) TopK(a *Tensor, k int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if k < 1 || int64(k) > a.Ne[0] {
		return c.opErr(OpTopK, ErrShape, fmt.Sprintf("k %d not in 1..a.ne[0]", k), a)
	}
	return c.NewOp(OpTopK, TypeI32, [MaxDims]int64{int64(k), a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// AddId adds to row (i1, i2, i3) of a the row ids[i1, i2] of the matrix b
// (a per-expert bias; ggml_add_id). ids is i32 with ids.ne0 == a.ne1 and
// ids.ne1 == a.ne2.
func (c *Context) AddId(a, b, ids *Tensor) *Tensor {
	if !c.ok(a, b, ids) {
		return nil
	}
	if a.Ne[0] != b.Ne[0] || a.Ne[1] != ids.Ne[0] || a.Ne[2] != ids.Ne[1] {
		return c.opErr(OpAddId, ErrShape, "want a.ne0 == b.ne0, a.ne1 == ids.ne0, a.ne2 == ids.ne1", a, b, ids)
	}
	if ids.Type != TypeI32 {
		return c.opErr(OpAddId, ErrUnsupported, "ids must be i32", a, b, ids)
	}
	t := c.NewOp(OpAddId, a.Type, a.Ne, a, b, ids)
	return t
}

// SoftMaxAddSinks gives SOFT_MAX tensor t attention sinks: one f32 logit
// per index of dimension 2 of its source, taken into the normalization as
// if it were part of every row (ggml_soft_max_add_sinks; src2). A nil
// sinks removes them. It returns t.
func (c *Context) SoftMaxAddSinks(t, sinks *Tensor) *Tensor {
	if !c.ok(t) {
		return nil
	}
	if sinks == nil {
		t.Src[2] = nil
		return t
	}
	if t.Op != OpSoftMax || t.Src[2] != nil {
		return c.opErr(t.Op, ErrUnsupported, "sinks need a SOFT_MAX tensor without sinks", t, sinks)
	}
	if sinks.Type != TypeF32 || t.Src[0].Ne[2] != sinks.Ne[0] {
		return c.opErr(OpSoftMax, ErrShape, "sinks must be f32 with one per index of dimension 2", t, sinks)
	}
	t.Src[2] = sinks
	return t
}
