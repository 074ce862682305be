package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds FLASH_ATTN_EXT and MUL_MAT_ID.

// unsupportedAttn returns why FLASH_ATTN_EXT or MUL_MAT_ID node t cannot
// be computed, or "" (ok reports whether t is one of them).
func unsupportedAttn(t *runtime.Tensor) (why string, ok bool) {
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	q, k, v := t.Src[0], t.Src[1], t.Src[2]
	switch t.Op {
	case runtime.OpFlashAttnExt:
		if why := srcOK(t, 3); why != "" {
			return why, true
		}
		if t.Type != f32 || q.Type != f32 || !IsRowType(k.Type) || !IsRowType(v.Type) ||
			k.Ne[0]%k.Type.BlockSize() != 0 || v.Ne[0]%v.Type.BlockSize() != 0 {
			return "want f32 q and result, k and v of a row type in whole blocks", true
		}
		if !q.IsContiguousRows() || !k.IsContiguousRows() || !v.IsContiguousRows() {
			return "q, k and v rows must be dense", true
		}
		if k.Ne[0] != q.Ne[0] || q.Ne[2]%k.Ne[2] != 0 || q.Ne[3]%k.Ne[3] != 0 || q.Ne[2]%v.Ne[2] != 0 ||
			q.Ne[3]%v.Ne[3] != 0 || k.Ne[1] != v.Ne[1] || q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3] {
			return "q, k and v shapes do not fit", true
		}
		if t.Ne != [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} || !t.IsContiguous() {
			return "result must be contiguous {v.ne0, q.ne2, q.ne1, q.ne3}", true
		}
		if m := t.Src[3]; m != nil {
			if m.Type != f16 || !m.IsContiguousRows() || m.Ne[0] < k.Ne[1] || m.Ne[1] < q.Ne[1] ||
				q.Ne[2]%m.Ne[2] != 0 || q.Ne[3]%m.Ne[3] != 0 {
				return "mask must be f16 with n_kv columns, q.ne1 rows, broadcastable heads", true
			}
		} else if t.OpParamF32(1) > 0 {
			return "max_bias > 0 needs a mask", true
		}
		if s := t.Src[4]; s != nil && (s.Type != f32 || s.Ne[0] != q.Ne[2]) {
			return "sinks must be f32 with one per head", true
		}
		return "", true
	case runtime.OpMulMatId:
		as, b, ids := t.Src[0], t.Src[1], t.Src[2]
		if why := srcOK(t, 3); why != "" {
			return why, true
		}
		if !IsRowType(as.Type) || !IsFloat(b.Type) || ids.Type != runtime.TypeI32 || t.Type != f32 {
			return "want row-type experts, float b, i32 ids, f32 result", true
		}
		if !as.IsContiguousRows() || as.Ne[3] != 1 || b.Ne[3] != 1 || ids.Ne[2] != 1 || ids.Ne[3] != 1 ||
			ids.Ne[1] != b.Ne[2] || as.Ne[0] != b.Ne[0] || ids.Ne[0]%b.Ne[1] != 0 ||
			t.Ne != [4]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1} {
			return "shapes do not fit", true
		}
		return "", true
	}
	return "", false
}

// flashAttn computes FLASH_ATTN_EXT for q rows [r0, r1) (row r is q row
// (i1, i2, i3) = (token, head, sequence)) as ggml's CPU kernel does: q is
// rounded to k's vec_dot type for the dot products (k's own float type;
// q8_0 or q8_1 for quantized k, whose rows are dequantized, as are v's),
// each score is scaled (by scale/softcap, then softcap·tanh when a
// softcap is set) and gets the slope-weighted mask, and an online
// soft-max in float32 accumulates v (in float32; ggml keeps an f16
// accumulator for f16 v, within test-backend-ops' 5e-4 bound of this).
// Sinks join the soft-max as one more score per head. Result row (token,
// head, sequence) is element (:, head, token, sequence).
func (k *kernel) flashAttn(r0, r1 int64) error {
	t, q, kt, v, mask, sinks := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2], k.t.Src[3], k.t.Src[4]
	scale, maxBias, softcap := t.OpParamF32(0), t.OpParamF32(1), t.OpParamF32(2)
	if softcap != 0 {
		scale /= softcap
	}
	dk, dv, nkv := q.Ne[0], v.Ne[0], kt.Ne[1]
	qrow := make([]float32, dk)
	krow := make([]float32, dk)
	vrow := make([]float32, dv)
	acc := make([]float32, dv)
	for r := r0; r < r1; r++ {
		iq1, iq2, iq3 := rowCoords(q.Ne, r)
		loadRow(q, k.src[0], iq1, iq2, iq3, qrow)
		// ggml converts q to k's vec_dot type with the CPU's quantizer
		// (q8_0 for q4_0 and q8_0 keys, f16 for f16 keys).
		if err := RoundActivations(kt.Type, qrow); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		slope := AlibiSlope(maxBias, iq2, q.Ne[2])
		ik2, ik3 := iq2/(q.Ne[2]/kt.Ne[2]), iq3/(q.Ne[3]/kt.Ne[3])
		iv2, iv3 := iq2/(q.Ne[2]/v.Ne[2]), iq3/(q.Ne[3]/v.Ne[3])
		var mo uint64
		if mask != nil {
			mo = off3(mask.Nb, iq1, iq2%mask.Ne[2], iq3%mask.Ne[3])
		}
		S, M := float32(0), float32(math.Inf(-1))
		clear(acc)
		for ic := int64(0); ic < nkv; ic++ {
			mv := float32(0)
			if mask != nil {
				mv = slope * F16ToF32(binary.LittleEndian.Uint16(k.src[3][mo+uint64(ic)*mask.Nb[0]:]))
				if math.IsInf(float64(mv), -1) {
					continue
				}
			}
			loadRow(kt, k.src[1], ic, ik2, ik3, krow)
			var dot float64
			for i, x := range qrow {
				dot += float64(x) * float64(krow[i])
			}
			s := float32(dot) * scale
			if softcap != 0 {
				s = softcap * float32(math.Tanh(float64(s)))
			}
			s += mv
			ms, vs := float32(1), float32(1)
			if s > M {
				ms = expf(M - s)
				M = s
				for i := range acc {
					acc[i] *= ms
				}
			} else {
				vs = expf(s - M)
			}
			loadRow(v, k.src[2], ic, iv2, iv3, vrow)
			for i, x := range vrow {
				acc[i] += x * vs
			}
			S = S*ms + vs
		}
		if sinks != nil {
			s := loadF(sinks.Type, k.src[4], uint64(iq2)*sinks.Nb[0])
			ms, vs := float32(1), float32(1)
			if s > M {
				ms = expf(M - s)
				M = s
				for i := range acc {
					acc[i] *= ms
				}
			} else {
				vs = expf(s - M)
			}
			S = S*ms + vs
		}
		inv := float32(0)
		if S != 0 {
			inv = 1 / S
		}
		for i := range acc {
			acc[i] *= inv
		}
		k.storeRow(acc, off3(t.Nb, iq2, iq1, iq3))
	}
	return nil
}

// mulMatID computes MUL_MAT_ID result rows [r0, r1): row (slot, token) is
// expert ids[slot, token]'s matrix times row (slot % b.ne1, token) of b.
// The products are mulMatRow's, MUL_MAT's own, so that both treat weight
// types alike.
func (k *kernel) mulMatID(r0, r1 int64) error {
	t, as, b, ids := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2]
	brow := make([]float32, b.Ne[0])
	arow := make([]float32, as.Ne[0])
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		slot, tok, _ := rowCoords(t.Ne, r)
		e := int64(int32(binary.LittleEndian.Uint32(k.src[2][uint64(slot)*ids.Nb[0]+uint64(tok)*ids.Nb[1]:])))
		if e < 0 || e >= as.Ne[2] {
			return fmt.Errorf("tensor %s: expert id %d at (%d, %d) of %q outside [0, %d): %w", t, e, slot, tok, ids.Name, as.Ne[2], runtime.ErrOutOfBounds)
		}
		loadRow(b, k.src[1], slot%b.Ne[1], tok, 0, brow)
		if err := k.mulMatRow(as, k.src[0], e, 0, brow, arow, out); err != nil {
			return err
		}
		k.storeRow(out, off3(t.Nb, slot, tok, 0))
	}
	return nil
}

// mulMatRow sets out[i0] to the dot product of row i0 of matrix (i2, i3)
// of a (bytes am) with brow, for every row of a (arow is scratch of a's row
// length), as MUL_MAT's reference computes them: float64 sums of the
// dequantized weights and the activations.
func (k *kernel) mulMatRow(a *runtime.Tensor, am []byte, i2, i3 int64, brow, arow, out []float32) error {
	// b's row is rounded to a's vec_dot type, as ggml's CPU backend does.
	if err := RoundActivations(a.Type, brow); err != nil {
		return fmt.Errorf("tensor %s: %w", k.t, err)
	}
	for i0 := int64(0); i0 < a.Ne[1]; i0++ {
		if err := loadRow(a, am, i0, i2, i3, arow); err != nil {
			return fmt.Errorf("tensor %s: %w", k.t, err)
		}
		var sum float64
		for j, v := range arow {
			sum += float64(v) * float64(brow[j])
		}
		out[i0] = float32(sum)
	}
	return nil
}
