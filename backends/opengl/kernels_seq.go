package opengl

import (
	"fmt"
	"math"
	"strings"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// This file maps the sequence-model and solver ops (SSM_SCAN, RWKV_WKV6,
// RWKV_WKV7, GATED_LINEAR_ATTN, GATED_DELTA_NET, SOLVE_TRI,
// LIGHTNING_INDEXER, DSV4_HC_*) to seq.comp. Their shapes are checked by
// the CPU reference's own rules (cpukernels.Supports), whose arithmetic
// the kernel ports; this file adds what the kernel needs on top: dense
// sources where it addresses them by flat index, state rows within its
// private arrays, and loops within llvmpipe's guard.

// seqMaxState is the longest state row (d_state, head size) an
// invocation of seq.comp keeps (MAXN); LIGHTNING_INDEXER's key rows may
// be 512 long (MAXD).
const seqMaxState = 256

// seqMaxIters bounds the loop iterations of one seq.comp invocation:
// llvmpipe stops an invocation after 65535 (RATIONALE: "OpenGL's later
// ops"), and the planner refuses nodes whose bound (seqIters) is above
// this, leaving room for the few iterations not counted.
const seqMaxIters = 60000

// seqIters is the loop iterations of the busiest seq.comp invocation for
// node t (an upper bound), from the kernel's loops. A loop of n
// iterations counts n+2, and a loop inside a branch not taken counts 2
// all the same: llvmpipe runs invocations in SIMD batches under execution
// masks, and its guard counts the passes through every loop's end.
// TestOpsSeqLoopGuard found both the bound n+1 and skipping untaken
// branches short.
func seqIters(t *runtime.Tensor) int64 {
	s := t.Src
	L := func(n int64) int64 { return n + 2 }
	walk := func(n int64) int64 { // a loop by 8 and its tail
		return L(n/8) + L(n%8)
	}
	switch t.Op {
	case runtime.OpSsmScan:
		nc, nt := s[0].Ne[0], s[1].Ne[2]
		return L(nc) + nt*(walk(nc)+L(0)+1) + min(int64(t.OpParamI32(0)), nt)*L(nc)
	case runtime.OpRwkvWkv6, runtime.OpGatedLinearAttn, runtime.OpRwkvWkv7:
		S, T := s[0].Ne[0], s[0].Ne[2]
		walks := int64(1)
		st := s[5]
		switch t.Op {
		case runtime.OpGatedLinearAttn:
			st = s[4]
		case runtime.OpRwkvWkv7:
			st, walks = s[6], 2
		}
		return 2*L(S) + T/st.Ne[1]*(walks*L(S)+1)
	case runtime.OpGatedDeltaNet:
		S, T := s[2].Ne[0], s[2].Ne[2]
		w := L(S/32) + L(S%32/8) + L(S%8)
		store := L(S/32) + L(S%32)
		return L(S) + T*(2*w+2*L(0)+1) + (min(int64(t.OpParamI32(0)), T)+1)*store
	case runtime.OpSolveTri:
		n := s[0].Ne[0]
		return n*(n-1)/2 + 3*n + 2
	case runtime.OpLightningIndexer:
		D, nh := s[0].Ne[0], s[0].Ne[1]
		return L(D) + L(nh) + nh*walk(D)
	case runtime.OpDsv4HcComb:
		hc := t.Ne[0]
		norm := L(hc) * (2*L(hc) + 1)
		return L(hc)*(3*L(hc)+1) + int64(2*t.OpParamI32(1))*norm + L(hc)*(L(hc)+1)
	case runtime.OpDsv4HcPre:
		return L(s[0].Ne[1])
	case runtime.OpDsv4HcPost:
		return L(s[1].Ne[1])
	}
	return 0
}

// cpuWhy is why the CPU reference kernels refuse node t's types or
// shapes, or "": the GL kernels that port one of them take its rules.
func cpuWhy(t *runtime.Tensor) string {
	if err := cpukernels.Supports(t); err != nil {
		return strings.TrimPrefix(err.Error(), fmt.Sprintf("tensor %s: ", t))
	}
	return ""
}

// planSeq maps the ops of seq.comp.
func planSeq(t *runtime.Tensor) (*launch, string) {
	if why := cpuWhy(t); why != "" {
		return nil, why
	}
	s := t.Src
	if n := seqIters(t); n > seqMaxIters {
		return nil, fmt.Sprintf("%d loop iterations per invocation, above %d (llvmpipe's loop guard)", n, seqMaxIters)
	}
	// seq launches with srcs in the slots and xs at bindings 5.., their
	// offsets in the first extras; units invocations.
	seq := func(def string, units int64, srcs []*runtime.Tensor, xs ...*runtime.Tensor) (*launch, string) {
		for _, x := range xs {
			if x != nil && !x.IsContiguous() {
				return nil, "sources past the third must be contiguous"
			}
		}
		l := &launch{kernel: "seq", grid: gridCount, local: 64, defines: []string{def}}
		copy(l.srcs[:], srcs)
		for i, x := range xs {
			if x != nil {
				l.binds[i], l.bindOff[i], l.extra[i] = x, i, uint32(x.Offset)
			}
		}
		l.count = (uint64(units) + l.local - 1) / l.local
		return l, ""
	}
	state := func(n int64) string {
		if n > seqMaxState {
			return fmt.Sprintf("state rows of %d elements, above the kernel's %d", n, seqMaxState)
		}
		return ""
	}
	switch t.Op {
	case runtime.OpSsmScan:
		x, ids := s[1], s[6]
		if why := state(s[0].Ne[0]); why != "" {
			return nil, why
		}
		l, why := seq("SSM", x.Ne[0]*x.Ne[1]*x.Ne[3], []*runtime.Tensor{x, s[4], s[5]}, s[0], s[2], s[3], ids)
		if l != nil {
			l.status = true
			l.extra[4], l.extra[5], l.extra[6] = uint32(ids.Nb[0]), uint32(s[3].Ne[0]), uint32(s[0].Ne[3])
		}
		return l, why
	case runtime.OpRwkvWkv6, runtime.OpGatedLinearAttn, runtime.OpRwkvWkv7:
		S, H := s[0].Ne[0], s[0].Ne[1]
		if why := state(S); why != "" {
			return nil, why
		}
		var l *launch
		var why string
		var ns int64
		switch t.Op {
		case runtime.OpRwkvWkv6:
			ns = s[5].Ne[1]
			l, why = seq("WKV6", S*H*ns, s[:3], s[3], s[4], s[5])
		case runtime.OpGatedLinearAttn:
			ns = s[4].Ne[1]
			l, why = seq("GLA", S*H*ns, s[:3], s[3], s[4])
		default:
			ns = s[6].Ne[1]
			l, why = seq("WKV7", S*H*ns, s[:3], s[3], s[4], s[5], s[6])
		}
		if l != nil {
			l.extra[4] = uint32(ns)
		}
		return l, why
	case runtime.OpGatedDeltaNet:
		v := s[2]
		S := v.Ne[0]
		if why := state(S); why != "" {
			return nil, why
		}
		l, why := seq("GDN", S*v.Ne[1]*v.Ne[3], s[:3], s[3], s[4], s[5])
		if l != nil {
			if s[3].Ne[0] == S && S > 1 {
				l.extra[4] = 1
			}
			l.extra[5] = uint32(v.Ne[3] / s[0].Ne[3])
			l.extra[6] = f32bits(1 / float32(math.Sqrt(float64(S))))
		}
		return l, why
	case runtime.OpSolveTri:
		return seq("SOLVE", s[1].Ne[0]*s[1].Ne[2]*s[1].Ne[3], s[:2])
	case runtime.OpLightningIndexer:
		k, m := s[1], s[3]
		if !isRowType(k.Type) && k.Type != runtime.TypeIQ4_NL {
			return nil, fmt.Sprintf("keys of type %s", k.Type)
		}
		if k.Ne[0] > 512 {
			return nil, "keys longer than 512 elements (the kernel's private row)"
		}
		if !stridesOK(m) || m.Nelements() > maxElements {
			return nil, "mask strides not aligned to its elements"
		}
		l := &launch{kernel: "seq", grid: gridCount, local: 64, defines: []string{"LI"}, srcs: [3]*runtime.Tensor{s[0], k, s[2]},
			count: uint64((k.Ne[2] + 63) / 64 * t.Ne[1] * t.Ne[3])}
		l.binds[0] = m
		l.extra = [8]uint32{uint32(m.Offset), uint32(m.Nb[1]), uint32(m.Nb[3]), uint32(m.Ne[3])}
		return l, ""
	case runtime.OpDsv4HcComb:
		if t.Ne[0] > 16 {
			return nil, fmt.Sprintf("%d hyper-connections, above the kernel's 16", t.Ne[0])
		}
		return seq("HCCOMB", s[0].Ne[1], s[:3])
	case runtime.OpDsv4HcPre:
		return &launch{kernel: "seq", grid: gridElements, local: 64, defines: []string{"HCPRE"}, srcs: [3]*runtime.Tensor{s[0], s[1]}}, ""
	case runtime.OpDsv4HcPost:
		l := &launch{kernel: "seq", grid: gridElements, local: 64, defines: []string{"HCPOST"}, srcs: [3]*runtime.Tensor{s[0], s[1], s[2]}}
		if c := s[3]; c != nil {
			l.binds[0] = c
			l.extra = [8]uint32{uint32(c.Offset), uint32(c.Nb[0]), uint32(c.Nb[1]), uint32(c.Nb[2]), 1}
		}
		return l, ""
	}
	return nil, fmt.Sprintf("op %s", t.Op)
}
