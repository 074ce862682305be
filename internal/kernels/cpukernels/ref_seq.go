package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the reference kernels of ggml 0.27.0's sequence-model
// and solver ops: SOLVE_TRI, SSM_SCAN, RWKV_WKV6, RWKV_WKV7,
// GATED_LINEAR_ATTN, GATED_DELTA_NET, LIGHTNING_INDEXER and the DeepSeek-V4
// hyper-connection ops DSV4_HC_COMB, DSV4_HC_PRE and DSV4_HC_POST, with
// ggml's CPU formulas and order of operations. Each splits its work in its
// own unit (heads, columns, tokens) across the parts of a Compute
// (seqOp); every unit writes result elements no other unit writes.

// seqOp reports whether op is one of this file's ops or a custom op
// (ref_custom.go).
func seqOp(op runtime.Op) bool {
	switch op {
	case runtime.OpSolveTri, runtime.OpSsmScan, runtime.OpRwkvWkv6, runtime.OpRwkvWkv7,
		runtime.OpGatedLinearAttn, runtime.OpGatedDeltaNet, runtime.OpLightningIndexer,
		runtime.OpDsv4HcComb, runtime.OpDsv4HcPre, runtime.OpDsv4HcPost:
		return true
	}
	return op.IsCustom()
}

// seqLoad reads the float32 at byte off of b.
func seqLoad(b []byte, off uint64) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

// seqStore writes v as a float32 at byte off of b.
func seqStore(b []byte, off uint64, v float32) {
	binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v))
}

// seqLoadVec reads len(dst) float32 values starting at byte off of b,
// stride bytes apart.
func seqLoadVec(b []byte, off, stride uint64, dst []float32) {
	for i := range dst {
		dst[i] = seqLoad(b, off+uint64(i)*stride)
	}
}

// seqMul multiplies element counts; ok is false on overflow (shapes a
// peer sends can make the product wrap) or a negative factor.
func seqMul(vs ...int64) (p int64, ok bool) {
	p = 1
	for _, v := range vs {
		if v < 0 || (v != 0 && p > math.MaxInt64/v) {
			return 0, false
		}
		p *= v
	}
	return p, true
}

// seqF32 checks that every tensor given is present and f32.
func seqF32(ts ...*runtime.Tensor) string {
	for i, s := range ts {
		if s == nil {
			return fmt.Sprintf("operand %d missing", i)
		}
		if s.Type != runtime.TypeF32 {
			return fmt.Sprintf("operand %d is %s, want f32", i, s.Type)
		}
	}
	return ""
}

// seqDense reports whether every tensor given is contiguous.
func seqDense(ts ...*runtime.Tensor) bool {
	for _, s := range ts {
		if !s.IsContiguous() {
			return false
		}
	}
	return true
}

// unsupportedSeq returns why node t of an op of this file cannot be
// computed, or "" (ok reports whether t's op is one of them).
func unsupportedSeq(t *runtime.Tensor) (why string, ok bool) {
	if !seqOp(t.Op) {
		return "", false
	}
	if t.Op.IsCustom() {
		return unsupportedCustom(t)
	}
	if why := seqShape(t); why != "" {
		return why, true
	}
	if t.Op != runtime.OpLightningIndexer && t.Op != runtime.OpDsv4HcComb && t.Op != runtime.OpDsv4HcPre &&
		t.Op != runtime.OpDsv4HcPost && t.Op != runtime.OpSolveTri && !t.IsContiguous() {
		return "result must be contiguous", true
	}
	return "", true
}

// seqShape checks the types and shapes of one of this file's ops.
func seqShape(t *runtime.Tensor) string {
	s := t.Src
	switch t.Op {
	case runtime.OpSolveTri:
		if why := seqF32(t, s[0], s[1]); why != "" {
			return why
		}
		a, b := s[0], s[1]
		if a.Ne[0] != a.Ne[1] || a.Ne[1] != b.Ne[1] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] || t.Ne != b.Ne {
			return "want square a {n, n, B2, B3}, b and result {k, n, B2, B3}"
		}
	case runtime.OpSsmScan:
		return ssmScanShape(t)
	case runtime.OpRwkvWkv6, runtime.OpRwkvWkv7, runtime.OpGatedLinearAttn:
		return rwkvShape(t)
	case runtime.OpGatedDeltaNet:
		return gdnShape(t)
	case runtime.OpLightningIndexer:
		return lightningShape(t)
	case runtime.OpDsv4HcComb, runtime.OpDsv4HcPre, runtime.OpDsv4HcPost:
		return hcShape(t)
	}
	return ""
}

// computeSeq runs part ith of nth of one of this file's ops.
func (k *kernel) computeSeq(ith, nth int) error {
	switch k.t.Op {
	case runtime.OpSolveTri:
		k.solveTri(ith, nth)
	case runtime.OpSsmScan:
		return k.ssmScan(ith, nth)
	case runtime.OpRwkvWkv6, runtime.OpRwkvWkv7, runtime.OpGatedLinearAttn:
		k.rwkv(ith, nth)
	case runtime.OpGatedDeltaNet:
		k.gatedDeltaNet(ith, nth)
	case runtime.OpLightningIndexer:
		return k.lightningIndexer(ith, nth)
	case runtime.OpDsv4HcComb:
		k.hcComb(ith, nth)
	case runtime.OpDsv4HcPre:
		k.hcPre(ith, nth)
	case runtime.OpDsv4HcPost:
		k.hcPost(ith, nth)
	default:
		return k.computeCustom(ith, nth)
	}
	return nil
}

// solveTri solves A·X = B for X by forward substitution, A lower
// triangular {n, n} per batch, B and X {k, n}: one column of X per unit,
// X[i] = (B[i] - Σ_{j<i} A[i][j]·X[j]) / A[i][i].
func (k *kernel) solveTri(ith, nth int) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	n, nk := a.Ne[0], b.Ne[0]
	c0, c1 := RowRange(nk*b.Ne[2]*b.Ne[3], ith, nth)
	x := make([]float32, n)
	arow := make([]float32, n)
	for c := c0; c < c1; c++ {
		col, i2, i3 := c%nk, (c/nk)%b.Ne[2], c/(nk*b.Ne[2])
		for i := int64(0); i < n; i++ {
			seqLoadVec(k.src[0], off3(a.Nb, i, i2, i3), a.Nb[0], arow[:i+1])
			var sum float32
			for j := int64(0); j < i; j++ {
				sum += arow[j] * x[j]
			}
			bv := seqLoad(k.src[1], uint64(col)*b.Nb[0]+off3(b.Nb, i, i2, i3))
			x[i] = (bv - sum) / arow[i]
			seqStore(k.dst, uint64(col)*t.Nb[0]+off3(t.Nb, i, i2, i3), x[i])
		}
	}
}

// ssmScanShape checks SSM_SCAN's sources: s {d_state, head_dim, n_head,
// n_seqs'}, x {head_dim, n_head, n_t, n_seqs}, dt {n_head, n_t, n_seqs}, A
// {d_state or 1, n_head}, B and C {d_state, n_group, n_t, n_seqs}, ids i32
// {n_seqs}; the result holds y (x's element count) then K states.
func ssmScanShape(t *runtime.Tensor) string {
	s, x, dt, a, b, c, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	if why := seqF32(t, s, x, dt, a, b, c); why != "" {
		return why
	}
	if ids == nil || ids.Type != runtime.TypeI32 || !ids.IsVector() {
		return "ids must be an i32 vector"
	}
	nc, nr, nh, nt, ns := s.Ne[0], x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3]
	kk := int64(t.OpParamI32(0))
	switch {
	case !s.IsContiguous() || !dt.IsContiguous() || !a.IsContiguous():
		return "s, dt and A must be contiguous"
	case x.Nb[0] != 4 || b.Nb[0] != 4 || c.Nb[0] != 4:
		return "x, B and C need dense rows"
	case s.Ne[1] != nr || s.Ne[2] != nh || dt.Ne != [4]int64{nh, nt, ns, 1}:
		return "s or dt shape does not fit x"
	case a.Ne[1] != nh || !a.IsMatrix() || (a.Ne[0] != 1 && a.Ne[0] != nc):
		return "A must be {d_state or 1, n_head}"
	case b.Ne != c.Ne || b.Ne[0] != nc || b.Ne[2] != nt || b.Ne[3] != ns || b.Ne[1] < 1 || nh%b.Ne[1] != 0:
		return "B and C must be {d_state, n_group, n_t, n_seqs} with n_head a multiple of n_group"
	case ids.Ne[0] != ns:
		return "ids must hold one entry per sequence"
	case kk < 1 || (a.Ne[0] != 1 && kk != 1):
		return fmt.Sprintf("K = %d (K > 1 needs scalar A)", kk)
	}
	if states, ok := seqMul(kk, nc, nr, nh, ns); !ok || states > math.MaxInt64-x.Nelements() ||
		t.Ne != [4]int64{x.Nelements() + states, 1, 1, 1} {
		return "result must be 1-d with x's elements and K states"
	}
	return ""
}

// ssmScan computes Mamba's selective scan, heads split across parts: per
// head h, token and dim element, dt' = softplus(dt), state = state·exp(dt'·A)
// + B·x·dt' and y = Σ state·C; the states after the last K tokens go to
// the result's state slots (slot 0 the final one).
func (k *kernel) ssmScan(ith, nth int) error {
	t := k.t
	s, x, dt, a, b, c, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	nc, nr, nh, ng, nt, ns := s.Ne[0], x.Ne[0], x.Ne[1], b.Ne[1], x.Ne[2], x.Ne[3]
	kk := int64(t.OpParamI32(0))
	sOff := uint64(x.Nelements()) * 4
	h0, h1 := RowRange(nh, ith, nth)
	state := make([]float32, nr*nc)
	bv, cv, av := make([]float32, nc), make([]float32, nc), make([]float32, a.Ne[0])
	for i3 := int64(0); i3 < ns; i3++ {
		id := int64(int32(binary.LittleEndian.Uint32(k.src[6][uint64(i3)*ids.Nb[0]:])))
		if id < 0 || id >= s.Ne[3] {
			return fmt.Errorf("tensor %s: sequence id %d at %d of %q outside [0, %d): %w", t, id, i3, ids.Name, s.Ne[3], runtime.ErrOutOfBounds)
		}
		for h := h0; h < h1; h++ {
			seqLoadVec(k.src[0], off3(s.Nb, 0, h, id), 4, state)
			seqLoadVec(k.src[3], uint64(h)*a.Nb[1], 4, av)
			g := h / (nh / ng)
			for i2 := int64(0); i2 < nt; i2++ {
				dtv := Softplus(seqLoad(k.src[2], off3(dt.Nb, i2, i3, 0)+uint64(h)*4))
				seqLoadVec(k.src[4], off3(b.Nb, g, i2, i3), 4, bv)
				seqLoadVec(k.src[5], off3(c.Nb, g, i2, i3), 4, cv)
				yo := uint64(((i3*nt+i2)*nh+h)*nr) * 4
				dA := float32(math.Exp(float64(dtv * av[0])))
				for i1 := int64(0); i1 < nr; i1++ {
					xdt := seqLoad(k.src[1], off3(x.Nb, h, i2, i3)+uint64(i1)*4) * dtv
					st := state[i1*nc : (i1+1)*nc]
					var sum float32
					if len(av) == 1 {
						for i0, p := range st {
							v := p*dA + bv[i0]*xdt
							sum += v * cv[i0]
							st[i0] = v
						}
					} else {
						for i0, p := range st {
							v := p*float32(math.Exp(float64(dtv*av[i0]))) + bv[i0]*xdt
							sum += v * cv[i0]
							st[i0] = v
						}
					}
					seqStore(k.dst, yo+uint64(i1)*4, sum)
				}
				slot := nt - 1 - i2
				if slot < kk {
					do := sOff + uint64(slot*ns+i3)*s.Nb[3] + uint64(h)*s.Nb[2]
					for i, v := range state {
						seqStore(k.dst, do+uint64(i)*4, v)
					}
				}
			}
		}
	}
	return nil
}

// rwkvShape checks RWKV_WKV6 (k, v, r, time_first, time_decay, state),
// GATED_LINEAR_ATTN (k, v, q, g, state) and RWKV_WKV7 (r, w, k, v, a, b,
// state): every token operand {S, H, T}, the state S·S·H·n_seqs elements,
// the result {S·H, T + S·n_seqs}.
func rwkvShape(t *runtime.Tensor) string {
	var tok []*runtime.Tensor
	var state *runtime.Tensor
	switch t.Op {
	case runtime.OpRwkvWkv6:
		tok, state = []*runtime.Tensor{t.Src[0], t.Src[1], t.Src[2], t.Src[4]}, t.Src[5]
		if why := seqF32(t.Src[3]); why != "" {
			return why
		}
	case runtime.OpGatedLinearAttn:
		tok, state = []*runtime.Tensor{t.Src[0], t.Src[1], t.Src[2], t.Src[3]}, t.Src[4]
	default:
		tok, state = t.Src[:6], t.Src[6]
	}
	if why := seqF32(append([]*runtime.Tensor{t, state}, tok...)...); why != "" {
		return why
	}
	if !seqDense(append([]*runtime.Tensor{state}, tok...)...) {
		return "operands must be contiguous"
	}
	S, H, T := tok[0].Ne[0], tok[0].Ne[1], tok[0].Ne[2]
	for _, o := range tok {
		if o.Ne != [4]int64{S, H, T, 1} {
			return "token operands must all be {S, H, T}"
		}
	}
	if t.Op == runtime.OpRwkvWkv6 && (t.Src[3].Nelements() != S*H || !t.Src[3].IsContiguous()) {
		return "time_first must hold S·H contiguous elements"
	}
	ns := state.Ne[1]
	if n, ok := seqMul(S, S, H, ns); !ok || ns < 1 || state.Nelements() != n || T%ns != 0 {
		return "state must hold S·S·H·n_seqs elements, T a multiple of n_seqs"
	}
	if t.Ne != [4]int64{S * H, T + S*ns, 1, 1} { // S·S·H·ns did not overflow
		return "result must be {S·H, T + S·n_seqs}"
	}
	return ""
}

// rwkv computes RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7, heads split
// across parts. The state of head h is an S×S matrix st[i][j]; per token
// (with tokens T/n_seqs per sequence):
//   - WKV6: y[j] = Σ_i r[i]·(k[i]v[j]·tf[i] + st[i][j]); st[i][j] = st[i][j]·td[i] + k[i]v[j]
//   - GLA:  st[i][j] = st[i][j]·g[i] + k[i]v[j]; y[j] = Σ_i st[i][j]·q[i]·scale
//   - WKV7: sa[i] = Σ_j a[j]st[i][j]; st[i][j] = st[i][j]·w[j] + v[i]k[j] + sa[i]b[j]; y[i] = Σ_j st[i][j]r[j]
func (k *kernel) rwkv(ith, nth int) {
	t := k.t
	var tok []int // source indices of the token operands
	var stIdx int
	switch t.Op {
	case runtime.OpRwkvWkv6:
		tok, stIdx = []int{0, 1, 2, 4}, 5 // k, v, r, td
	case runtime.OpGatedLinearAttn:
		tok, stIdx = []int{0, 1, 2, 3}, 4 // k, v, q, g
	default:
		tok, stIdx = []int{0, 1, 2, 3, 4, 5}, 6 // r, w, k, v, a, b
	}
	S, H, T := t.Src[0].Ne[0], t.Src[0].Ne[1], t.Src[0].Ne[2]
	ns := t.Src[stIdx].Ne[1]
	per := T / ns
	C := S * H
	scale := t.OpParamF32(0)
	h0, h1 := RowRange(H, ith, nth)
	st := make([]float32, S*S)
	vecs := make([][]float32, len(tok))
	for i := range vecs {
		vecs[i] = make([]float32, S)
	}
	tf := make([]float32, S)
	y := make([]float32, S)
	stateOut := uint64(C*T) * 4
	for h := h0; h < h1; h++ {
		if t.Op == runtime.OpRwkvWkv6 {
			seqLoadVec(k.src[3], uint64(h*S)*4, 4, tf)
		}
		for sq := int64(0); sq < ns; sq++ {
			so := uint64(sq*S*C+h*S*S) * 4
			seqLoadVec(k.src[stIdx], so, 4, st)
			for tt := sq * per; tt < (sq+1)*per; tt++ {
				vo := uint64(tt*C+h*S) * 4
				for i, si := range tok {
					seqLoadVec(k.src[si], vo, 4, vecs[i])
				}
				clear(y)
				switch t.Op {
				case runtime.OpRwkvWkv6:
					kv, vv, rv, td := vecs[0], vecs[1], vecs[2], vecs[3]
					for i := int64(0); i < S; i++ {
						row := st[i*S : (i+1)*S]
						for j, p := range row {
							kvv := vv[j] * kv[i]
							y[j] += (kvv*tf[i] + p) * rv[i]
							row[j] = p*td[i] + kvv
						}
					}
				case runtime.OpGatedLinearAttn:
					kv, vv, qv, g := vecs[0], vecs[1], vecs[2], vecs[3]
					for i := int64(0); i < S; i++ {
						row := st[i*S : (i+1)*S]
						q := qv[i] * scale
						for j, p := range row {
							v := p*g[i] + vv[j]*kv[i]
							y[j] += v * q
							row[j] = v
						}
					}
				default:
					rv, w, kv, vv, av, bv := vecs[0], vecs[1], vecs[2], vecs[3], vecs[4], vecs[5]
					for i := int64(0); i < S; i++ {
						row := st[i*S : (i+1)*S]
						var sa float32
						for j, p := range row {
							sa += av[j] * p
						}
						var r float32
						for j, p := range row {
							v := p*w[j] + vv[i]*kv[j] + sa*bv[j]
							row[j] = v
							r += v * rv[j]
						}
						y[i] = r
					}
				}
				for j, v := range y {
					seqStore(k.dst, vo+uint64(j)*4, v)
				}
			}
			for i, v := range st {
				seqStore(k.dst, stateOut+so+uint64(i)*4, v)
			}
		}
	}
}

// gdnShape checks GATED_DELTA_NET: q and k {S, H_k, T, n_seqs_k}, v {S,
// H, T, n_seqs} (H a multiple of H_k, n_seqs of n_seqs_k), g {1 or S, H,
// T, n_seqs}, beta {1, H, T, n_seqs}, state {S, S, H, n_seqs}; the result
// {S·H, T·n_seqs + K·S·n_seqs} with K in op parameter 0.
func gdnShape(t *runtime.Tensor) string {
	q, kk, v, g, beta, st := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	if why := seqF32(t, q, kk, v, g, beta, st); why != "" {
		return why
	}
	S, H, T, N := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	K := int64(t.OpParamI32(0))
	switch {
	case q.Nb[0] != 4 || kk.Nb[0] != 4 || v.Nb[0] != 4 || !seqDense(g, beta, st):
		return "q, k and v need dense rows; g, beta and state must be contiguous"
	case q.Ne != kk.Ne || q.Ne[0] != S || q.Ne[2] != T || q.Ne[1] < 1 || q.Ne[3] < 1 || H%q.Ne[1] != 0 || N%q.Ne[3] != 0:
		return "q and k must be {S, H_k, T, n_seqs_k} dividing v's heads and sequences"
	case (g.Ne[0] != 1 && g.Ne[0] != S) || g.Ne[1] != H || g.Ne[2] != T || g.Ne[3] != N:
		return "g must be {1 or S, H, T, n_seqs}"
	case beta.Ne != [4]int64{1, H, T, N}:
		return "beta must be {1, H, T, n_seqs}"
	case st.Ne != [4]int64{S, S, H, N}:
		return "state must be {S, S, H, n_seqs}"
	case K < 1:
		return fmt.Sprintf("K = %d", K)
	}
	if snaps, ok := seqMul(K, S, N); !ok || snaps > math.MaxInt64-T*N || t.Ne != [4]int64{S * H, T*N + snaps, 1, 1} {
		return "result must be {S·H, T·n_seqs + K·S·n_seqs}"
	}
	return ""
}

// gatedDeltaNet computes the gated delta rule, (head, sequence) pairs
// split across parts. The state M (M[j][i] = S[i][j]) is decayed by
// exp(g) (per column i for vector g), then delta[j] = (v[j] - M[j]·k)·β,
// M[j] += delta[j]·k, and the output o[j] = M[j]·q / √S. The states after
// the last K tokens go to the result's slots (slot 0 the final state).
func (k *kernel) gatedDeltaNet(ith, nth int) {
	t := k.t
	q, kt, v, g, beta, st := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	S, H, T, N := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	K := int64(t.OpParamI32(0))
	kda := g.Ne[0] == S && S > 1
	rq3 := N / q.Ne[3]
	scale := 1 / float32(math.Sqrt(float64(S)))
	attnBytes := uint64(S*H*T*N) * 4
	snapBytes := uint64(S*S*H*N) * 4
	u0, u1 := RowRange(H*N, ith, nth)
	M := make([]float32, S*S)
	qv, kv, vv, gv, delta := make([]float32, S), make([]float32, S), make([]float32, S), make([]float32, g.Ne[0]), make([]float32, S)
	for u := u0; u < u1; u++ {
		h, sq := u%H, u/H
		hq, sqq := h%q.Ne[1], sq/rq3
		seqLoadVec(k.src[5], off3(st.Nb, 0, h, sq), 4, M)
		for tt := int64(0); tt < T; tt++ {
			seqLoadVec(k.src[0], off3(q.Nb, hq, tt, sqq), 4, qv)
			seqLoadVec(k.src[1], off3(kt.Nb, hq, tt, sqq), 4, kv)
			seqLoadVec(k.src[2], off3(v.Nb, h, tt, sq), 4, vv)
			seqLoadVec(k.src[3], off3(g.Nb, h, tt, sq), 4, gv)
			b := seqLoad(k.src[4], off3(beta.Nb, h, tt, sq))
			if kda {
				for i, x := range gv {
					delta[i] = float32(math.Exp(float64(x)))
				}
				for j := int64(0); j < S; j++ {
					row := M[j*S : (j+1)*S]
					for i := range row {
						row[i] *= delta[i]
					}
				}
			} else {
				e := float32(math.Exp(float64(gv[0])))
				for i := range M {
					M[i] *= e
				}
			}
			for j := int64(0); j < S; j++ {
				delta[j] = (vv[j] - seqDot(M[j*S:(j+1)*S], kv)) * b
			}
			for j := int64(0); j < S; j++ {
				row, d := M[j*S:(j+1)*S], delta[j]
				for i, x := range kv {
					row[i] += x * d
				}
			}
			ao := uint64(((sq*T+tt)*H+h)*S) * 4
			for j := int64(0); j < S; j++ {
				seqStore(k.dst, ao+uint64(j)*4, seqDot(M[j*S:(j+1)*S], qv)*scale)
			}
			if slot := T - 1 - tt; slot < K {
				so := attnBytes + uint64(slot)*snapBytes + uint64((sq*H+h)*S*S)*4
				for i, x := range M {
					seqStore(k.dst, so+uint64(i)*4, x)
				}
			}
		}
		if T == 0 {
			so := attnBytes + uint64((sq*H+h)*S*S)*4
			for i, x := range M {
				seqStore(k.dst, so+uint64(i)*4, x)
			}
		}
	}
}

// seqDot is Σ a[i]·b[i] in float32 with eight partial sums, the shape of
// ggml's AVX vec_dot_f32. b must be at least as long as a.
func seqDot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	sum := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for i := n; i < len(a); i++ {
		sum += a[i] * b[i]
	}
	return sum
}

// lightningShape checks LIGHTNING_INDEXER: q f32 {D, n_head, n_tok, ns},
// k {D, 1, n_kv, ns} of a row type, weights f32 {n_head, n_tok, 1, ns},
// mask f16 {n_kv, n_tok, 1, nm} with ns a multiple of nm; the result f32
// {n_kv, n_tok, 1, ns}.
func lightningShape(t *runtime.Tensor) string {
	q, kt, w, m := t.Src[0], t.Src[1], t.Src[2], t.Src[3]
	if why := seqF32(t, q, w); why != "" {
		return why
	}
	if kt == nil || m == nil || m.Type != runtime.TypeF16 || !IsRowType(kt.Type) {
		return "want a float or quantized k and an f16 mask"
	}
	switch {
	case t.Nb[0] != 4 || q.Nb[0] != 4 || w.Nb[0] != 4 || m.Nb[0] != 2 || !kt.IsContiguousRows():
		return "operands need dense rows"
	case kt.Ne[0] != q.Ne[0] || kt.Ne[1] != 1 || kt.Ne[3] != q.Ne[3]:
		return "k must be {D, 1, n_kv, ns}"
	case w.Ne != [4]int64{q.Ne[1], q.Ne[2], 1, q.Ne[3]}:
		return "weights must be {n_head, n_tok, 1, ns}"
	case m.Ne[0] != kt.Ne[2] || m.Ne[1] != q.Ne[2] || m.Ne[2] != 1 || m.Ne[3] < 1 || q.Ne[3]%m.Ne[3] != 0:
		return "mask must be {n_kv, n_tok, 1, nm} with ns a multiple of nm"
	case t.Ne != [4]int64{kt.Ne[2], q.Ne[2], 1, q.Ne[3]}:
		return "result must be {n_kv, n_tok, 1, ns}"
	}
	return ""
}

// lightningIndexer scores every key for every token, keys split across
// parts: out[ik, t, s] = Σ_h max(q[:, h, t, s]·k[:, ik, s], 0)·w[h, t, s]
// + mask[ik, t, s mod nm]. Keys are converted to float32 once, in blocks.
func (k *kernel) lightningIndexer(ith, nth int) error {
	const blk = 32
	t, q, kt, w, m := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2], k.t.Src[3]
	D, nh, ntok, ns := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3]
	r0, r1 := RowRange(kt.Ne[2], ith, nth)
	kbuf, qs, wv := make([]float32, blk*D), make([]float32, nh*D), make([]float32, nh)
	rowBytes := kt.Type.RowSize(D)
	for s := int64(0); s < ns; s++ {
		for kb := r0; kb < r1; kb += blk {
			n := min(blk, r1-kb)
			for j := int64(0); j < n; j++ {
				ko := off3(kt.Nb, 0, kb+j, s)
				row, src := kbuf[j*D:(j+1)*D], k.src[1][ko:ko+rowBytes]
				if err := ToFloat(kt.Type, src, row); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
			for tt := int64(0); tt < ntok; tt++ {
				for h := int64(0); h < nh; h++ {
					seqLoadVec(k.src[0], off3(q.Nb, h, tt, s), 4, qs[h*D:(h+1)*D])
				}
				seqLoadVec(k.src[2], off3(w.Nb, tt, 0, s), 4, wv)
				mo, do := off3(m.Nb, tt, 0, s%m.Ne[3]), off3(t.Nb, tt, 0, s)
				for j := int64(0); j < n; j++ {
					krow := kbuf[j*D : (j+1)*D]
					var score float32
					for h := int64(0); h < nh; h++ {
						score += max(seqDot(qs[h*D:(h+1)*D], krow), 0) * wv[h]
					}
					ik := uint64(kb + j)
					mv := F16ToF32(binary.LittleEndian.Uint16(k.src[3][mo+ik*2:]))
					seqStore(k.dst, do+ik*t.Nb[0], score+mv)
				}
			}
		}
	}
	return nil
}

// hcShape checks the DeepSeek-V4 hyper-connection ops:
//   - COMB: mixes {(2+hc)·hc, n_t}, scale {≥3}, base {(2+hc)·hc}; result {hc, hc, n_t}
//   - PRE: x {n_embd, hc, n_t} and weights {hc, n_t}, or (op parameter 1
//     set, gated) a gate of x's shape; result {n_embd, n_t}
//   - POST: x {n_embd, n_t}, residual {n_embd, hc, n_t}, post {hc, n_t},
//     comb {hc, hc, n_t} or none (identity); result {n_embd, hc, n_t}
func hcShape(t *runtime.Tensor) string {
	s := t.Src
	switch t.Op {
	case runtime.OpDsv4HcComb:
		if why := seqF32(t, s[0], s[1], s[2]); why != "" {
			return why
		}
		hc := runtime.HyperConnections(s[0].Ne[0])
		switch {
		case hc == 0 || !s[0].IsMatrix():
			return "mixes must be {(2+hc)·hc, n_t}"
		case s[1].Ne[0] < 3 || !s[1].IsVector() || s[2].Ne != [4]int64{s[0].Ne[0], 1, 1, 1}:
			return "scale must be {≥3}, base {(2+hc)·hc}"
		case t.OpParamI32(1) < 1:
			return "n_iter must be positive"
		case t.Ne != [4]int64{hc, hc, s[0].Ne[1], 1}:
			return "result must be {hc, hc, n_t}"
		}
	case runtime.OpDsv4HcPre:
		if why := seqF32(t, s[0], s[1]); why != "" {
			return why
		}
		x, w := s[0], s[1]
		want := [4]int64{x.Ne[1], x.Ne[2], 1, 1}
		if t.OpParamI32(1) != 0 {
			want = x.Ne
		}
		if x.Ne[3] != 1 || w.Ne != want || t.Ne != [4]int64{x.Ne[0], x.Ne[2], 1, 1} {
			return "want x {n_embd, hc, n_t}, weights {hc, n_t} (gated: a gate like x), result {n_embd, n_t}"
		}
	case runtime.OpDsv4HcPost:
		if why := seqF32(t, s[0], s[1], s[2]); why != "" {
			return why
		}
		x, r, p, c := s[0], s[1], s[2], s[3]
		ne, nt, hc := x.Ne[0], x.Ne[1], r.Ne[1]
		if !x.IsMatrix() || r.Ne != [4]int64{ne, hc, nt, 1} || p.Ne != [4]int64{hc, nt, 1, 1} || t.Ne != r.Ne {
			return "want x {n_embd, n_t}, residual and result {n_embd, hc, n_t}, post {hc, n_t}"
		}
		if c != nil && (c.Type != runtime.TypeF32 || c.Ne != [4]int64{hc, hc, nt, 1}) {
			return "comb must be f32 {hc, hc, n_t}"
		}
	}
	return ""
}

// hcComb builds each token's hc×hc combination matrix, tokens split
// across parts: logits mixes·scale[2] + base, a softmax over dst plus eps,
// then alternating normalizations (sums starting at eps) over src and dst.
func (k *kernel) hcComb(ith, nth int) {
	t, mx, sc, base := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2]
	eps, nIter := t.OpParamF32(0), t.OpParamI32(1)
	hc := t.Ne[0]
	scale := seqLoad(k.src[1], 2*sc.Nb[0])
	comb := make([]float32, hc*hc)
	r0, r1 := RowRange(mx.Ne[1], ith, nth)
	norm := func(overSrc bool) {
		for a := int64(0); a < hc; a++ {
			idx := func(b int64) int64 {
				if overSrc {
					return a + hc*b // a = dst, b = src
				}
				return b + hc*a // a = src, b = dst
			}
			sum := eps
			for b := int64(0); b < hc; b++ {
				sum += comb[idx(b)]
			}
			inv := 1 / sum
			for b := int64(0); b < hc; b++ {
				comb[idx(b)] *= inv
			}
		}
	}
	for it := r0; it < r1; it++ {
		for src := int64(0); src < hc; src++ {
			mxv := float32(math.Inf(-1))
			for dst := int64(0); dst < hc; dst++ {
				i := dst + hc*src
				v := seqLoad(k.src[0], uint64(2*hc+i)*mx.Nb[0]+uint64(it)*mx.Nb[1])*scale +
					seqLoad(k.src[2], uint64(2*hc+i)*base.Nb[0])
				comb[i] = v
				mxv = max(mxv, v)
			}
			var sum float32
			for dst := int64(0); dst < hc; dst++ {
				i := dst + hc*src
				comb[i] = float32(math.Exp(float64(comb[i] - mxv)))
				sum += comb[i]
			}
			inv := 1 / sum
			for dst := int64(0); dst < hc; dst++ {
				i := dst + hc*src
				comb[i] = comb[i]*inv + eps
			}
		}
		norm(true)
		for i := int32(1); i < nIter; i++ {
			norm(false)
			norm(true)
		}
		for src := int64(0); src < hc; src++ {
			for dst := int64(0); dst < hc; dst++ {
				seqStore(k.dst, uint64(dst)*t.Nb[0]+off3(t.Nb, src, it, 0), comb[dst+hc*src])
			}
		}
	}
}

// hcPre collapses the hc streams, result elements split across parts:
// out[i, t] = Σ_h x[i, h, t]·w[h, t], or gated scale·Σ_h x·sigmoid(gate).
func (k *kernel) hcPre(ith, nth int) {
	t, x, w := k.t, k.t.Src[0], k.t.Src[1]
	ne, hc := x.Ne[0], x.Ne[1]
	gated := t.OpParamI32(1) != 0
	scale := t.OpParamF32(0)
	r0, r1 := RowRange(ne*x.Ne[2], ith, nth)
	for r := r0; r < r1; r++ {
		i0, it := r%ne, r/ne
		var sum float32
		for h := int64(0); h < hc; h++ {
			xv := seqLoad(k.src[0], uint64(i0)*x.Nb[0]+off3(x.Nb, h, it, 0))
			if gated {
				gv := seqLoad(k.src[1], uint64(i0)*w.Nb[0]+off3(w.Nb, h, it, 0))
				sum += xv * (1 / (1 + float32(math.Exp(float64(-gv)))))
			} else {
				sum += xv * seqLoad(k.src[1], uint64(h)*w.Nb[0]+off3(w.Nb, it, 0, 0))
			}
		}
		if gated {
			sum *= scale
		}
		seqStore(k.dst, uint64(i0)*t.Nb[0]+off3(t.Nb, it, 0, 0), sum)
	}
}

// hcPost expands back to hc streams, result elements split across parts:
// out[i, d, t] = x[i, t]·post[d, t] + Σ_s residual[i, s, t]·comb[d, s, t]
// (without comb: + residual[i, d, t]).
func (k *kernel) hcPost(ith, nth int) {
	t, x, r, p, c := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2], k.t.Src[3]
	ne, hc := x.Ne[0], r.Ne[1]
	r0, r1 := RowRange(t.Nelements(), ith, nth)
	for e := r0; e < r1; e++ {
		i0, d, it := e%ne, (e/ne)%hc, e/(ne*hc)
		sum := seqLoad(k.src[0], uint64(i0)*x.Nb[0]+off3(x.Nb, it, 0, 0)) *
			seqLoad(k.src[2], uint64(d)*p.Nb[0]+off3(p.Nb, it, 0, 0))
		if c == nil {
			sum += seqLoad(k.src[1], uint64(i0)*r.Nb[0]+off3(r.Nb, d, it, 0))
		} else {
			for s := int64(0); s < hc; s++ {
				sum += seqLoad(k.src[1], uint64(i0)*r.Nb[0]+off3(r.Nb, s, it, 0)) *
					seqLoad(k.src[3], uint64(d)*c.Nb[0]+off3(c.Nb, s, it, 0))
			}
		}
		seqStore(k.dst, uint64(i0)*t.Nb[0]+off3(t.Nb, d, it, 0), sum)
	}
}
