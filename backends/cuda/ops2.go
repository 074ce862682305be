package cuda

import (
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds SupportsOp's checks and the launches of the ops added
// for llama-family decoders and whisper-style encoders beyond the first
// set: GLU, IM2COL and FLASH_ATTN_EXT.

// supportsGlu reports whether k_glu computes GLU node t: a float type
// throughout, one function of ggml 0.27.0, the two halves of source 0's
// rows or two sources of one shape.
func (b *Backend) supportsGlu(t *runtime.Tensor) bool {
	s0, s1 := t.Src[0], t.Src[1]
	g := runtime.GluOp(t.OpParamI32(0))
	if s0 == nil || g < 0 || g >= runtime.GluCount || !isFloatType(t.Type) || s0.Type != t.Type {
		return false
	}
	nc := s0.Ne[0] / 2
	if s1 != nil {
		if s1.Type != s0.Type || s1.Ne != s0.Ne {
			return false
		}
		nc = s0.Ne[0]
	}
	return nc >= 1 && t.Ne == [4]int64{nc, s0.Ne[1], s0.Ne[2], s0.Ne[3]}
}

// supportsIm2col reports whether k_im2col computes IM2COL node t: a
// float input, an f32 or f16 result whose rows are the kernel's channels
// × height × width and whose batch is the input's.
func (b *Backend) supportsIm2col(t *runtime.Tensor) bool {
	a, in := t.Src[0], t.Src[1]
	if a == nil || in == nil || !isFloatType(in.Type) || (t.Type != f32 && t.Type != f16) {
		return false
	}
	kw, kh, ic := a.Ne[0], int64(1), a.Ne[1]
	batchOK := t.Ne[2] == in.Ne[2] && ic == in.Ne[1]
	if t.OpParamI32(6) != 0 {
		kh, ic = a.Ne[1], a.Ne[2]
		batchOK = t.Ne[3] == in.Ne[3] && ic == in.Ne[2]
	}
	return batchOK && kw <= math.MaxInt32 && kh <= math.MaxInt32 && t.Ne[0] == ic*kh*kw
}

// faKeyTypes are the K types k_flash_attn_ext_f32 takes: the float
// types, and the quantized KV-cache types llama.cpp offers but iq4_nl.
var faKeyTypes = map[runtime.Type]bool{
	f32: true, f16: true, runtime.TypeBF16: true,
	runtime.TypeQ4_0: true, runtime.TypeQ4_1: true, runtime.TypeQ5_0: true, runtime.TypeQ5_1: true, runtime.TypeQ8_0: true,
}

// supportsFlashAttn reports whether k_flash_attn_ext_f32 computes
// FLASH_ATTN_EXT node t: f32 q and a contiguous f32 result {v.ne0,
// q.ne2, q.ne1, q.ne3}; K of faKeyTypes (q is rounded to its vec_dot
// type, as ggml's CPU rounds it; quantized K in dense rows of whole
// blocks); V of any type load_elem reads, with
// dense rows; K/V heads dividing q's (grouped-query attention); an f16
// mask broadcast over heads and sequences; f32 sinks, one per head.
func (b *Backend) supportsFlashAttn(t *runtime.Tensor) bool {
	q, k, v, mask, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	if q == nil || k == nil || v == nil || t.Type != f32 || q.Type != f32 || !faKeyTypes[k.Type] ||
		(k.Type.IsQuantized() && (!k.IsContiguousRows() || k.Ne[0]%32 != 0)) ||
		!isMatRowType(v.Type) || (v.Type.IsQuantized() && !v.IsContiguousRows()) {
		return false
	}
	if k.Ne[0] != q.Ne[0] || q.Ne[0] > faMaxDK || v.Ne[0] > 4*faThreads || k.Ne[1] != v.Ne[1] ||
		k.Ne[2] == 0 || v.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 || q.Ne[2]%v.Ne[2] != 0 ||
		q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3] {
		return false
	}
	if t.Ne != [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} || !t.IsContiguous() {
		return false
	}
	if mask != nil && (mask.Type != f16 || mask.Ne[0] < k.Ne[1] || mask.Ne[1] < q.Ne[1] || mask.Ne[2] == 0 ||
		mask.Ne[3] == 0 || q.Ne[2]%mask.Ne[2] != 0 || q.Ne[3]%mask.Ne[3] != 0) {
		return false
	}
	return sinks == nil || (sinks.Type == f32 && sinks.Ne[0] == q.Ne[2] && sinks.Nb[0] == 4)
}

// flashAttn launches FLASH_ATTN_EXT node t: one block of faThreads per q
// row.
func (b *Backend) flashAttn(t *runtime.Tensor, dst uint64) error {
	q, k, v, mask, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	var p [5]uint64
	for i, s := range []*runtime.Tensor{q, k, v, mask, sinks} {
		if s == nil {
			continue
		}
		var err error
		if p[i], err = b.addr(s); err != nil {
			return err
		}
	}
	ms := t // any shape: the kernel reads no mask without one
	if mask != nil {
		ms = mask
	}
	scale, maxBias, softcap := t.OpParamF32(0), t.OpParamF32(1), t.OpParamF32(2)
	if softcap != 0 {
		scale /= softcap
	}
	a := (&args{}).ptr(dst).shape(t).ptr(p[0]).shape(q).ptr(p[1]).shape(k).i32(int32(k.Type)).
		ptr(p[2]).shape(v).i32(int32(v.Type)).ptr(p[3]).shape(ms).ptr(p[4]).f32(scale).f32(maxBias).f32(softcap)
	shared := uint32(q.Ne[0]+2*faThreads+q.Ne[0]/32) * 4
	return b.launch(&kFlashAttn, dim3{clampGrid(q.Nrows(), maxGridX), 1, 1}, dim3{faThreads, 1, 1}, shared, a)
}
