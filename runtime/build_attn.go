package runtime

import "fmt"

// Builders of FLASH_ATTN_EXT and MUL_MAT_ID, with ggml 0.27.0's shape
// rules and op-parameter layout.

// Precisions of FlashAttnExtSetPrec (ggml_prec), op parameter 3.
const (
	PrecDefault int32 = 0
	PrecF32     int32 = 10
)

// FlashAttnExt is ggml_flash_attn_ext: soft_max(scale·q·kᵀ + slope·mask)·v
// per head in one op. q is f32 {d_k, n_tokens, n_head, n_seq}; k is
// {d_k, n_kv, n_head_kv, n_seq} and v {d_v, n_kv, n_head_kv, n_seq}
// (n_head a multiple of n_head_kv: grouped-query attention); mask (f16,
// contiguous, optional) has at least n_kv columns and n_tokens rows and
// repeats over heads and sequences. With softcap ≠ 0 each score becomes
// softcap·tanh(score·scale/softcap). The result is f32 {d_v, n_head,
// n_tokens, n_seq} (heads and tokens swapped). Op parameters: float32
// scale, maxBias, softcap; src0..3 = q, k, v, mask.
func (c *Context) FlashAttnExt(q, k, v, mask *Tensor, scale, maxBias, softcap float32) *Tensor {
	if !c.ok(q, k, v) {
		return nil
	}
	if k.Ne[0] != q.Ne[0] || q.Ne[2]%k.Ne[2] != 0 || q.Ne[3]%k.Ne[3] != 0 || k.IsTransposed() {
		return c.opErr(OpFlashAttnExt, ErrShape, "k cannot multiply q (k.ne0 == q.ne0, q.ne2,3 multiples of k's)", q, k, v)
	}
	if q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3] {
		return c.opErr(OpFlashAttnExt, ErrShape, "q, k and v need one ne3", q, k, v)
	}
	if mask != nil {
		if mask.Type != TypeF16 || !mask.IsContiguous() {
			return c.opErr(OpFlashAttnExt, ErrUnsupported, "mask must be contiguous f16", q, k, v, mask)
		}
		if q.Ne[2]%mask.Ne[2] != 0 || q.Ne[3]%mask.Ne[3] != 0 {
			return c.opErr(OpFlashAttnExt, ErrShape, "q.ne2,3 must be multiples of mask's", q, k, v, mask)
		}
	} else if maxBias > 0 {
		return c.opErr(OpFlashAttnExt, ErrShape, "max_bias > 0 needs a mask", q, k, v)
	}
	t := c.NewOp(OpFlashAttnExt, TypeF32, [MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, q, k, v)
	if t == nil {
		return nil
	}
	t.Src[3] = mask
	t.SetOpParamF32(0, scale)
	t.SetOpParamF32(1, maxBias)
	t.SetOpParamF32(2, softcap)
	return t
}

// FlashAttnExtSetPrec sets FLASH_ATTN_EXT tensor t's precision (PrecDefault
// or PrecF32; op parameter 3; ggml_flash_attn_ext_set_prec). The CPU
// computes in float32 either way. It returns t.
func (c *Context) FlashAttnExtSetPrec(t *Tensor, prec int32) *Tensor {
	if !c.ok(t) {
		return nil
	}
	if t.Op != OpFlashAttnExt {
		return c.opErr(t.Op, ErrUnsupported, "precision of a tensor that is not FLASH_ATTN_EXT", t)
	}
	if prec != PrecDefault && prec != PrecF32 {
		return c.opErr(t.Op, ErrUnsupported, fmt.Sprintf("precision %d", prec), t)
	}
	t.SetOpParamI32(3, prec)
	return t
}

// FlashAttnExtAddSinks gives FLASH_ATTN_EXT tensor t attention sinks: one
// f32 score per head joining each soft-max (src4;
// ggml_flash_attn_ext_add_sinks). A nil sinks removes them. It returns t.
func (c *Context) FlashAttnExtAddSinks(t, sinks *Tensor) *Tensor {
	if !c.ok(t) {
		return nil
	}
	if sinks == nil {
		t.Src[4] = nil
		return t
	}
	if t.Op != OpFlashAttnExt || t.Src[4] != nil {
		return c.opErr(t.Op, ErrUnsupported, "sinks need a FLASH_ATTN_EXT tensor without sinks", t, sinks)
	}
	if sinks.Type != TypeF32 || t.Src[0].Ne[2] != sinks.Ne[0] {
		return c.opErr(t.Op, ErrShape, "sinks must be f32 with one per head", t, sinks)
	}
	t.Src[4] = sinks
	return t
}

// FlashAttnBack stands for ggml_flash_attn_back (the gradients of q, k and v
// of an attention given the result's gradient d). ggml 0.27.0's builder
// aborts on every call ("TODO: adapt to ggml_flash_attn_ext() changes"):
// the op belonged to the removed ggml_flash_attn, and its layout does not
// match FLASH_ATTN_EXT's. gogml defines no semantics ggml has not, so
// FlashAttnBack always fails: it records an error wrapping ErrUnsupported
// in the context and returns nil.
func (c *Context) FlashAttnBack(q, k, v, d *Tensor, masked bool) *Tensor {
	if !c.ok(q, k, v, d) {
		return nil
	}
	return c.opErr(OpFlashAttnBack, ErrUnsupported,
		"ggml 0.27.0 aborts on ggml_flash_attn_back (not adapted to FLASH_ATTN_EXT); gogml does not define it either", q, k, v, d)
}

// MulMatId multiplies by per-token experts (ggml_mul_mat_id): as holds one
// matrix per expert {k, rows, n_expert}, b the activations {k, n_b,
// n_tokens} and ids (i32 {n_used, n_tokens}) the experts; result row
// (slot, token), f32 {rows, n_used, n_tokens}, is expert ids[slot, token]
// times row (slot % n_b, token) of b.
func (c *Context) MulMatId(as, b, ids *Tensor) *Tensor {
	if !c.ok(as, b, ids) {
		return nil
	}
	if as.IsTransposed() {
		return c.opErr(OpMulMatId, ErrShape, "experts are transposed", as, b, ids)
	}
	if ids.Type != TypeI32 {
		return c.opErr(OpMulMatId, ErrUnsupported, "ids must be i32", as, b, ids)
	}
	if as.Ne[3] != 1 || b.Ne[3] != 1 || ids.Ne[2] != 1 || ids.Ne[3] != 1 || ids.Ne[1] != b.Ne[2] ||
		as.Ne[0] != b.Ne[0] || ids.Ne[0]%b.Ne[1] != 0 {
		return c.opErr(OpMulMatId, ErrShape, "want 3-d as and b, 2-d ids with ids.ne1 == b.ne2, as.ne0 == b.ne0, ids.ne0 a multiple of b.ne1", as, b, ids)
	}
	return c.NewOp(OpMulMatId, TypeF32, [MaxDims]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1}, as, b, ids)
}
