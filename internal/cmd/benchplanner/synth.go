package main

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// synthLlama builds a llama-style decoder forward graph of the given
// number of layers (a batch of 32 tokens over a 256-entry KV cache, dim
// 2048, 16 heads, f16 weights and cache held outside the allocator), about
// 31 nodes per layer: the size of graph (96 layers: ~3,000 nodes) the
// corpus's 32-layer big-* graphs stop short of.
func synthLlama(layers int) (*runtime.GraphFile, error) {
	const (
		dim, heads, ff = 2048, 16, 5632
		hd             = dim / heads
		nTok, nCtx     = 32, 256
	)
	ctx := runtime.NewContext()
	weight := func(ne ...int64) *runtime.Tensor {
		t := ctx.NewTensor(runtime.TypeF16, ne...)
		t.Preallocated = true
		return t
	}
	input := func(typ runtime.Type, ne ...int64) *runtime.Tensor {
		t := ctx.NewTensor(typ, ne...)
		t.SetInput()
		return t
	}
	tokEmb := weight(dim, 32000)
	tokens := input(runtime.TypeI32, nTok)
	pos := input(runtime.TypeI32, nTok)
	mask := input(runtime.TypeF32, nCtx, nTok)
	x := ctx.GetRows(tokEmb, tokens)
	var cpys []*runtime.Tensor
	for range layers {
		wq, wk, wv, wo := weight(dim, dim), weight(dim, dim), weight(dim, dim), weight(dim, dim)
		attnNorm, ffnNorm := weight(dim), weight(dim)
		wGate, wUp, wDown := weight(dim, ff), weight(dim, ff), weight(ff, dim)
		kCache, vCache := weight(hd*heads*nCtx), weight(hd*heads*nCtx)
		kCache.Preallocated, vCache.Preallocated = true, true

		h := ctx.Mul(ctx.RMSNorm(x, 1e-5), attnNorm)
		q := ctx.Rope(ctx.Reshape(ctx.MulMat(wq, h), hd, heads, nTok), pos, hd, 0)
		k := ctx.Rope(ctx.Reshape(ctx.MulMat(wk, h), hd, heads, nTok), pos, hd, 0)
		v := ctx.MulMat(wv, h)
		rowK := uint64(dim) * 2
		cpys = append(cpys,
			ctx.Cpy(k, ctx.View1D(kCache, nTok*dim, 0)),
			ctx.Cpy(v, ctx.View1D(vCache, nTok*dim, 0)))
		kv := ctx.View3D(kCache, hd, nCtx, heads, rowK, uint64(hd)*2, 0)
		kq := ctx.MulMat(kv, ctx.Permute(q, 0, 2, 1, 3))
		kq = ctx.SoftMaxExt(kq, mask, 1/float32(11.3), 0)
		vv := ctx.View3D(vCache, nCtx, hd, heads, uint64(nCtx)*2, uint64(nCtx*hd)*2, 0)
		kqv := ctx.Permute(ctx.MulMat(vv, kq), 0, 2, 1, 3)
		attn := ctx.MulMat(wo, ctx.Reshape(ctx.Cont(kqv), dim, nTok))
		x = ctx.Add(x, attn)
		h = ctx.Mul(ctx.RMSNorm(x, 1e-5), ffnNorm)
		up := ctx.SwigluSplit(ctx.MulMat(wGate, h), ctx.MulMat(wUp, h))
		x = ctx.Add(x, ctx.MulMat(wDown, up))
	}
	out := ctx.MulMat(weight(dim, 32000), ctx.Mul(ctx.RMSNorm(x, 1e-5), weight(dim)))
	out.SetOutput()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := runtime.NewGraph()
	for _, c := range cpys {
		if err := g.BuildForwardExpand(c); err != nil {
			return nil, err
		}
	}
	if err := g.BuildForwardExpand(out); err != nil {
		return nil, err
	}
	if g.NumNodes() == 0 {
		return nil, fmt.Errorf("empty graph")
	}
	return &runtime.GraphFile{
		BufferTypes: []*runtime.VirtualBufferType{{TypeName: "host", Align: 32, Max: runtime.NoMaxSize, AllocPad: 1}},
		Buffers:     []int{0},
		Tensors:     ctx.Tensors(),
		Graph:       g,
	}, nil
}
