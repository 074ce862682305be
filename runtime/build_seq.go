package runtime

import (
	"fmt"
	"math"
	"math/bits"
)

// Builders of ggml 0.27.0's sequence-model and solver ops (SOLVE_TRI,
// SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, GATED_DELTA_NET,
// LIGHTNING_INDEXER, DSV4_HC_COMB, DSV4_HC_PRE, DSV4_HC_POST), with ggml's
// shape rules, source order and op-parameter layout.

// seqMulNe multiplies element counts, reporting false on overflow or a
// negative factor.
func seqMulNe(vs ...int64) (int64, bool) {
	p := uint64(1)
	for _, v := range vs {
		if v < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(v))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// seqAllF32 reports whether every tensor is f32.
func seqAllF32(ts ...*Tensor) bool {
	for _, t := range ts {
		if t.Type != TypeF32 {
			return false
		}
	}
	return true
}

// SolveTri solves a·x = b for x (ggml_solve_tri): a {n, n, B2, B3} f32 is
// triangular, b {k, n, B2, B3} f32 holds k right-hand sides as columns;
// the result has b's shape. Like ggml 0.27.0, only the left, lower,
// non-unit-diagonal variant exists (left && lower && !uni); a and b must be
// contiguous. A zero on a's diagonal gives Inf or NaN, as in ggml.
func (c *Context) SolveTri(a, b *Tensor, left, lower, uni bool) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !left || !lower || uni {
		return c.opErr(OpSolveTri, ErrUnsupported, "only left, lower, non-unit-diagonal systems are implemented", a, b)
	}
	if !seqAllF32(a, b) || !a.IsContiguous() || !b.IsContiguous() {
		return c.opErr(OpSolveTri, ErrShape, "a and b must be contiguous f32", a, b)
	}
	if a.Ne[0] != a.Ne[1] || a.Ne[1] != b.Ne[1] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] {
		return c.opErr(OpSolveTri, ErrShape, "want square a {n, n, B2, B3} and b {k, n, B2, B3}", a, b)
	}
	return c.NewOp(OpSolveTri, TypeF32, b.Ne, a, b)
}

// SsmScan is Mamba's selective scan (ggml_ssm_scan). s {d_state, head_dim,
// n_head, n_rs} holds the initial states, x {head_dim, n_head, n_t,
// n_seqs}, dt {n_head, n_t, n_seqs}, A {d_state, n_head} (Mamba-1) or {1,
// n_head} (Mamba-2), B and C {d_state, n_group, n_t, n_seqs} (n_head a
// multiple of n_group), ids i32 {n_seqs} picks each sequence's row of s.
// The 1-d f32 result holds y (x's shape, dense) followed by K state
// snapshots of s's row shape per sequence, most recent first (K > 1 needs
// Mamba-2's scalar A). Op parameter 0: int32 K.
func (c *Context) SsmScan(s, x, dt, a, b, cc, ids *Tensor, k int64) *Tensor {
	if !c.ok(s, x, dt, a, b, cc, ids) {
		return nil
	}
	fail := func(why string) *Tensor { return c.opErr(OpSsmScan, ErrShape, why, s, x, dt, a, b, cc, ids) }
	nc, nr, nh, nt, ns := s.Ne[0], x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3]
	switch {
	case k < 1 || k > math.MaxInt32:
		return fail(fmt.Sprintf("K = %d, want 1 to 2^31-1", k))
	case !seqAllF32(s, x, dt, a, b, cc) || ids.Type != TypeI32:
		return fail("want f32 operands and i32 ids")
	case !s.IsContiguous() || !dt.IsContiguous() || !a.IsContiguous():
		return fail("s, dt and A must be contiguous")
	case !x.IsContiguousRows() || !b.IsContiguousRows() || !cc.IsContiguousRows() ||
		x.Nb[1] != uint64(x.Ne[0])*4 || b.Nb[1] != uint64(b.Ne[0])*4 || cc.Nb[1] != uint64(cc.Ne[0])*4:
		return fail("x, B and C need dense rows and dense dimension 1")
	case b.Ne != cc.Ne:
		return fail("B and C shapes differ")
	case dt.Ne != [MaxDims]int64{nh, nt, ns, 1} || s.Ne[1] != nr || s.Ne[2] != nh:
		return fail("want dt {n_head, n_t, n_seqs} and s {d_state, head_dim, n_head, n_rs}")
	case b.Ne[0] != nc || b.Ne[2] != nt || b.Ne[3] != ns || nh%b.Ne[1] != 0:
		return fail("want B {d_state, n_group, n_t, n_seqs} with n_head a multiple of n_group")
	case ids.Ne != [MaxDims]int64{ns, 1, 1, 1}:
		return fail("want ids {n_seqs}")
	case !a.IsMatrix() || a.Ne[1] != nh || (a.Ne[0] != 1 && a.Ne[0] != nc):
		return fail("want A {d_state or 1, n_head}")
	case a.Ne[0] != 1 && k != 1:
		return fail("K > 1 needs Mamba-2's scalar A")
	}
	states, ok := seqMulNe(k, nc, nr, nh, ns)
	if !ok || states > math.MaxInt64-x.Nelements() {
		return fail("result size overflows")
	}
	t := c.NewOp(OpSsmScan, TypeF32, [MaxDims]int64{x.Nelements() + states, 1, 1, 1}, s, x, dt, a, b, cc, ids)
	if t != nil {
		t.SetOpParamI32(0, int32(k))
	}
	return t
}

// rwkvLike builds RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7: every token
// operand {S, H, n_tokens} f32 contiguous, state (S·S·H·n_seqs elements,
// ne[1] = n_seqs) f32 contiguous; the result {S·H, n_tokens + S·n_seqs}
// holds the outputs, then the final states.
func (c *Context) rwkvLike(op Op, tok []*Tensor, extra, state *Tensor, srcs ...*Tensor) *Tensor {
	if !c.ok(srcs...) {
		return nil
	}
	fail := func(why string) *Tensor { return c.opErr(op, ErrShape, why, srcs...) }
	for _, t := range srcs {
		if t.Type != TypeF32 || !t.IsContiguous() {
			return fail("operands must be contiguous f32")
		}
	}
	S, H, T := tok[0].Ne[0], tok[0].Ne[1], tok[0].Ne[2]
	for _, t := range tok {
		if t.Ne != [MaxDims]int64{S, H, T, 1} {
			return fail("token operands must all be {S, H, n_tokens}")
		}
	}
	if extra != nil && extra.Nelements() != S*H {
		return fail("time_first must hold S·H elements")
	}
	ns := state.Ne[1]
	n, ok := seqMulNe(S, S, H, ns)
	if !ok || state.Nelements() != n || T%ns != 0 {
		return fail("state must hold S·S·H·n_seqs elements (ne[1] = n_seqs dividing n_tokens)")
	}
	rows, ok := seqMulNe(S, ns)
	if !ok || rows > math.MaxInt64-T {
		return fail("result size overflows")
	}
	return c.NewOp(op, TypeF32, [MaxDims]int64{S * H, T + rows, 1, 1}, srcs...)
}

// RwkvWkv6 is RWKV-6's time mixing (ggml_rwkv_wkv6): k, v, r and time
// decay td {S, H, n_tokens}, time_first tf (S·H elements), state {S·S·H,
// n_seqs}; per head, y[j] = Σ_i r[i]·(k[i]v[j]·tf[i] + st[i][j]) and st[i][j]
// = st[i][j]·td[i] + k[i]v[j]. The result {S·H, n_tokens + S·n_seqs} holds
// y, then the final states.
func (c *Context) RwkvWkv6(k, v, r, tf, td, state *Tensor) *Tensor {
	if !c.ok(k, v, r, tf, td, state) {
		return nil
	}
	return c.rwkvLike(OpRwkvWkv6, []*Tensor{k, v, r, td}, tf, state, k, v, r, tf, td, state)
}

// GatedLinearAttn is gated linear attention (ggml_gated_linear_attn): k,
// v, q and gate g {S, H, n_tokens}, state {S·S·H, n_seqs}; per head st[i][j]
// = st[i][j]·g[i] + k[i]v[j] and y[j] = Σ_i st[i][j]·q[i]·scale. The result
// {S·H, n_tokens + S·n_seqs} holds y, then the final states. Op parameter
// 0: float scale.
func (c *Context) GatedLinearAttn(k, v, q, g, state *Tensor, scale float32) *Tensor {
	if !c.ok(k, v, q, g, state) {
		return nil
	}
	t := c.rwkvLike(OpGatedLinearAttn, []*Tensor{k, v, q, g}, nil, state, k, v, q, g, state)
	if t != nil {
		t.SetOpParamF32(0, scale)
	}
	return t
}

// RwkvWkv7 is RWKV-7's time mixing (ggml_rwkv_wkv7): r, w, k, v, a and b
// {S, H, n_tokens}, state {S·S·H, n_seqs}; per head sa[i] = Σ_j a[j]st[i][j],
// st[i][j] = st[i][j]·w[j] + v[i]k[j] + sa[i]b[j] and y[i] = Σ_j st[i][j]r[j].
// The result {S·H, n_tokens + S·n_seqs} holds y, then the final states.
func (c *Context) RwkvWkv7(r, w, k, v, a, b, state *Tensor) *Tensor {
	if !c.ok(r, w, k, v, a, b, state) {
		return nil
	}
	return c.rwkvLike(OpRwkvWkv7, []*Tensor{r, w, k, v, a, b}, nil, state, r, w, k, v, a, b, state)
}

// GatedDeltaNet is the gated delta rule (ggml_gated_delta_net): q and k
// {S, H_k, n_t, n_seqs_k}, v {S, H, n_t, n_seqs} (H a multiple of H_k,
// n_seqs of n_seqs_k; q and k heads repeat tiled), gate g {1, H, n_t,
// n_seqs} or {S, H, n_t, n_seqs} (KDA), beta {1, H, n_t, n_seqs}, state
// {S, S, H, n_seqs}, all f32; q, k and v need dense rows, the rest must be
// contiguous. The result {S·H, n_t·n_seqs + K·S·n_seqs} holds the outputs,
// then K state snapshots, most recent first (slots older than n_t are not
// written). Op parameter 0: int32 K.
func (c *Context) GatedDeltaNet(q, k, v, g, beta, state *Tensor, kSlots int64) *Tensor {
	if !c.ok(q, k, v, g, beta, state) {
		return nil
	}
	fail := func(why string) *Tensor { return c.opErr(OpGatedDeltaNet, ErrShape, why, q, k, v, g, beta, state) }
	S, H, T, N := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	switch {
	case kSlots < 1 || kSlots > math.MaxInt32:
		return fail(fmt.Sprintf("K = %d, want 1 to 2^31-1", kSlots))
	case !seqAllF32(q, k, v, g, beta, state):
		return fail("operands must be f32")
	case !q.IsContiguousRows() || !k.IsContiguousRows() || !v.IsContiguousRows() ||
		!g.IsContiguous() || !beta.IsContiguous() || !state.IsContiguous():
		return fail("q, k and v need dense rows; g, beta and state must be contiguous")
	case q.Ne != k.Ne || q.Ne[0] != S || q.Ne[2] != T || H%q.Ne[1] != 0 || N%q.Ne[3] != 0:
		return fail("want q and k {S, H_k, n_t, n_seqs_k} dividing v's heads and sequences")
	case (g.Ne[0] != 1 && g.Ne[0] != S) || g.Ne[1] != H || g.Ne[2] != T || g.Ne[3] != N:
		return fail("want g {1 or S, H, n_t, n_seqs}")
	case beta.Ne != [MaxDims]int64{1, H, T, N}:
		return fail("want beta {1, H, n_t, n_seqs}")
	case state.Ne != [MaxDims]int64{S, S, H, N}:
		return fail("want state {S, S, H, n_seqs}")
	}
	snaps, ok1 := seqMulNe(kSlots, S, N)
	toks, ok2 := seqMulNe(T, N)
	cols, ok3 := seqMulNe(S, H)
	if !ok1 || !ok2 || !ok3 || snaps > math.MaxInt64-toks {
		return fail("result size overflows")
	}
	t := c.NewOp(OpGatedDeltaNet, TypeF32, [MaxDims]int64{cols, toks + snaps, 1, 1}, q, k, v, g, beta, state)
	if t != nil {
		t.SetOpParamI32(0, int32(kSlots))
	}
	return t
}

// LightningIndexer is DeepSeek's sparse-attention indexer
// (ggml_lightning_indexer): q f32 {D, n_head, n_tok, ns}, k {D, 1, n_kv,
// ns} (any type with a float conversion; dense rows), weights f32 {n_head,
// n_tok, 1, ns} (prescaled), mask f16 {n_kv, n_tok, 1, nm} with ns a
// multiple of nm. The f32 result {n_kv, n_tok, 1, ns} scores every key:
// Σ_h max(q_h·k, 0)·w_h + mask.
func (c *Context) LightningIndexer(q, k, weights, mask *Tensor) *Tensor {
	if !c.ok(q, k, weights, mask) {
		return nil
	}
	fail := func(why string) *Tensor {
		return c.opErr(OpLightningIndexer, ErrShape, why, q, k, weights, mask)
	}
	switch {
	case q.Type != TypeF32 || weights.Type != TypeF32 || mask.Type != TypeF16:
		return fail("want f32 q and weights, f16 mask")
	case !q.IsContiguousRows() || !k.IsContiguousRows() || !weights.IsContiguousRows() || !mask.IsContiguousRows():
		return fail("operands need dense rows")
	case q.Ne[0] != k.Ne[0] || k.Ne[1] != 1 || q.Ne[3] != k.Ne[3]:
		return fail("want k {D, 1, n_kv, ns}")
	case weights.Ne != [MaxDims]int64{q.Ne[1], q.Ne[2], 1, q.Ne[3]}:
		return fail("want weights {n_head, n_tok, 1, ns}")
	case mask.Ne[0] != k.Ne[2] || mask.Ne[1] != q.Ne[2] || mask.Ne[2] != 1 || q.Ne[3]%mask.Ne[3] != 0:
		return fail("want mask {n_kv, n_tok, 1, nm} with nm dividing ns")
	}
	return c.NewOp(OpLightningIndexer, TypeF32, [MaxDims]int64{k.Ne[2], q.Ne[2], 1, q.Ne[3]}, q, k, weights, mask)
}

// HyperConnections returns the hyper-connection count hc of DSV4_HC_COMB
// mixes n wide, the hc with (2+hc)·hc = n, or 0 when no count fits.
func HyperConnections(n int64) int64 {
	if n < 3 || n > 1<<60 {
		return 0
	}
	r := int64(math.Sqrt(float64(n + 1))) // (hc+1)² = n+1
	for hc := max(r-2, 1); hc <= r; hc++ {
		if (2+hc)*hc == n {
			return hc
		}
	}
	return 0
}

// Dsv4HcComb builds DeepSeek-V4's hyper-connection combination matrices
// (ggml_dsv4_hc_comb): mixes {(2+hc)·hc, n_t}, scale {≥3}, base
// {(2+hc)·hc}, all f32. Per token, logits[dst, src] = mixes[2hc + dst +
// hc·src]·scale[2] + base[…] get a softmax over dst plus eps, then
// alternating normalizations over src and dst (n_iter in all). The result
// is {hc, hc, n_t}. Op parameters: float eps, int32 n_iter. ggml 0.27.0
// builds hc = 4 only; gogml accepts any hc.
func (c *Context) Dsv4HcComb(mixes, scale, base *Tensor, eps float32, nIter int32) *Tensor {
	if !c.ok(mixes, scale, base) {
		return nil
	}
	fail := func(why string) *Tensor { return c.opErr(OpDsv4HcComb, ErrShape, why, mixes, scale, base) }
	hc := HyperConnections(mixes.Ne[0])
	switch {
	case nIter < 1:
		return fail(fmt.Sprintf("n_iter = %d, want at least 1", nIter))
	case !seqAllF32(mixes, scale, base):
		return fail("operands must be f32")
	case hc == 0 || !mixes.IsMatrix():
		return fail("want mixes {(2+hc)·hc, n_t}")
	case scale.Ne[0] < 3 || !scale.IsVector() || base.Ne != [MaxDims]int64{mixes.Ne[0], 1, 1, 1}:
		return fail("want scale {≥3} and base {(2+hc)·hc}")
	}
	t := c.NewOp(OpDsv4HcComb, TypeF32, [MaxDims]int64{hc, hc, mixes.Ne[1], 1}, mixes, scale, base)
	if t != nil {
		t.SetOpParamF32(0, eps)
		t.SetOpParamI32(1, nIter)
	}
	return t
}

// Dsv4HcPre collapses hyper-connection streams (ggml_dsv4_hc_pre): x
// {n_embd, hc, n_t} and weights {hc, n_t} f32; the result {n_embd, n_t} is
// Σ_h x[i, h, t]·weights[h, t].
func (c *Context) Dsv4HcPre(x, weights *Tensor) *Tensor {
	if !c.ok(x, weights) {
		return nil
	}
	if !seqAllF32(x, weights) || x.Ne[3] != 1 || weights.Ne != [MaxDims]int64{x.Ne[1], x.Ne[2], 1, 1} {
		return c.opErr(OpDsv4HcPre, ErrShape, "want f32 x {n_embd, hc, n_t} and weights {hc, n_t}", x, weights)
	}
	return c.NewOp(OpDsv4HcPre, TypeF32, [MaxDims]int64{x.Ne[0], x.Ne[2], 1, 1}, x, weights)
}

// Dsv4HcPreGated collapses hyper-connection streams through a
// per-element gate (ggml_dsv4_hc_pre_gated): x and gate {n_embd, hc, n_t}
// f32; the result {n_embd, n_t} is scale·Σ_h x[i, h, t]·sigmoid(gate[i, h,
// t]). Op parameters: float scale, int32 1 (gated).
func (c *Context) Dsv4HcPreGated(x, gate *Tensor, scale float32) *Tensor {
	if !c.ok(x, gate) {
		return nil
	}
	if !seqAllF32(x, gate) || x.Ne[3] != 1 || gate.Ne != x.Ne {
		return c.opErr(OpDsv4HcPre, ErrShape, "want f32 x and gate {n_embd, hc, n_t}", x, gate)
	}
	t := c.NewOp(OpDsv4HcPre, TypeF32, [MaxDims]int64{x.Ne[0], x.Ne[2], 1, 1}, x, gate)
	if t != nil {
		t.SetOpParamF32(0, scale)
		t.SetOpParamI32(1, 1)
	}
	return t
}

// Dsv4HcPost expands back to hyper-connection streams
// (ggml_dsv4_hc_post): x {n_embd, n_t}, residual {n_embd, hc, n_t}, post
// {hc, n_t} and comb {hc, hc, n_t}, all f32; the result {n_embd, hc, n_t}
// is x[i, t]·post[d, t] + Σ_s residual[i, s, t]·comb[d, s, t]. A nil comb
// stands for the identity: x·post + residual[i, d, t].
func (c *Context) Dsv4HcPost(x, residual, post, comb *Tensor) *Tensor {
	if !c.ok(x, residual, post) {
		return nil
	}
	ts := []*Tensor{x, residual, post}
	if comb != nil {
		ts = append(ts, comb)
	}
	ne, nt, hc := x.Ne[0], x.Ne[1], residual.Ne[1]
	switch {
	case !seqAllF32(ts...):
		return c.opErr(OpDsv4HcPost, ErrShape, "operands must be f32", ts...)
	case !x.IsMatrix() || residual.Ne != [MaxDims]int64{ne, hc, nt, 1} || post.Ne != [MaxDims]int64{hc, nt, 1, 1}:
		return c.opErr(OpDsv4HcPost, ErrShape, "want x {n_embd, n_t}, residual {n_embd, hc, n_t}, post {hc, n_t}", ts...)
	case comb != nil && comb.Ne != [MaxDims]int64{hc, hc, nt, 1}:
		return c.opErr(OpDsv4HcPost, ErrShape, "want comb {hc, hc, n_t}", ts...)
	}
	return c.NewOp(OpDsv4HcPost, TypeF32, residual.Ne, ts...)
}
