package gallocr

import (
	"fmt"
	"math/bits"

	"github.com/gogml/gogml/runtime"
)

// CtxSplit is how a context's tensors are cut into buffers: per buffer, the
// index range [Start, End) of the context's tensors and the bytes it needs.
type CtxSplit struct {
	Start, End int
	Size       uint64
}

// PlanCtxTensors cuts the tensors of ctx that need memory into buffers of
// bt without allocating anything (the dry run): in creation order, a new
// buffer starts whenever the next tensor (its alloc size padded to the
// alignment) would push the current one past bt's max size. A tensor larger
// than the max size gets a buffer of its own.
func PlanCtxTensors(ctx *runtime.Context, bt runtime.BufferType) ([]CtxSplit, error) {
	align := bt.Alignment()
	if !runtime.IsPow2(align) {
		return nil, fmt.Errorf("alloc ctx tensors: %s alignment %d: %w", bt.Name(), align, runtime.ErrAlignment)
	}
	maxSize := bt.MaxSize()
	ts := ctx.Tensors()
	var out []CtxSplit
	var cur uint64
	first := 0
	for i, t := range ts {
		var size uint64
		if !t.HasData() && t.ViewSrc == nil {
			need := bt.AllocSize(t)
			if size = runtime.AlignUp(need, align); size < need {
				return nil, fmt.Errorf("alloc ctx tensors: tensor %q: %w", t.Name, runtime.ErrOverflow)
			}
		}
		sum, carry := bits.Add64(cur, size, 0)
		if cur > 0 && (carry != 0 || sum > maxSize) {
			out = append(out, CtxSplit{first, i, cur})
			first, cur = i, size
		} else {
			if carry != 0 {
				return nil, fmt.Errorf("alloc ctx tensors: %w", runtime.ErrOverflow)
			}
			cur = sum
		}
	}
	if cur > 0 {
		out = append(out, CtxSplit{first, len(ts), cur})
	}
	return out, nil
}

// CtxTensorsSize returns the total bytes AllocCtxTensors would allocate.
func CtxTensorsSize(ctx *runtime.Context, bt runtime.BufferType) (uint64, error) {
	splits, err := PlanCtxTensors(ctx, bt)
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, s := range splits {
		total += s.Size
	}
	return total, nil
}

// AllocCtxTensors gives every tensor of ctx that has no memory a place in
// new buffers of bt, split across several buffers when bt has a finite max
// size, and initialises views from their bases (preallocated tensors are
// skipped). It returns one buffer, or a *runtime.MultiBuffer over several,
// with usage set to weights; nil when no tensor needed memory. On error
// nothing stays allocated and no tensor keeps a place in the new buffers.
func AllocCtxTensors(ctx *runtime.Context, bt runtime.BufferType) (runtime.Buffer, error) {
	splits, err := PlanCtxTensors(ctx, bt)
	if err != nil {
		return nil, err
	}
	if len(splits) == 0 {
		return nil, nil
	}
	ts := ctx.Tensors()
	var bufs []runtime.Buffer
	undo := func() {
		for _, t := range ts {
			for _, b := range bufs {
				if t.Buffer == b {
					t.Buffer, t.Offset = nil, 0
				}
			}
		}
		for _, b := range bufs {
			b.Free()
		}
	}
	for _, s := range splits {
		buf, err := bt.AllocBuffer(s.Size)
		if err != nil {
			undo()
			return nil, fmt.Errorf("alloc ctx tensors: %s buffer of %d bytes for %s: %w", bt.Name(), s.Size, tensorRange(ts, s.Start, s.End), err)
		}
		bufs = append(bufs, buf)
		buf.SetUsage(runtime.UsageWeights)
		ta, err := NewTallocr(buf)
		if err != nil {
			undo()
			return nil, err
		}
		for _, t := range ts[s.Start:s.End] {
			switch {
			case t.ViewSrc == nil && !t.HasData():
				err = ta.Alloc(t)
			case t.ViewSrc != nil && t.Buffer == nil && t.ViewSrc.Buffer != nil:
				err = runtime.ViewInit(t)
			}
			if err != nil {
				undo()
				return nil, fmt.Errorf("alloc ctx tensors: %w", err)
			}
		}
	}
	if len(bufs) == 1 {
		return bufs[0], nil
	}
	mb, err := runtime.NewMultiBuffer(bufs)
	if err != nil {
		undo()
		return nil, err
	}
	return mb, nil
}

// tensorRange names the tensors ts[start:end] for messages by their names
// (their context index where unnamed): "tensor \"w\"" or "3 tensors
// \"a\" .. \"c\"".
func tensorRange(ts []*runtime.Tensor, start, end int) string {
	name := func(i int) string {
		if ts[i].Name != "" {
			return fmt.Sprintf("%q", ts[i].Name)
		}
		return fmt.Sprintf("#%d", i)
	}
	if end-start == 1 {
		return "tensor " + name(start)
	}
	return fmt.Sprintf("%d tensors %s .. %s", end-start, name(start), name(end-1))
}
