package runtime

import "fmt"

// Custom ops: ggml's MAP_CUSTOM1/2/3 and CUSTOM run a user function
// instead of a built-in kernel. In gogml the function is a Go func held by
// the node (Tensor.Custom); the CPU backend runs it on its worker pool.
// A function cannot travel over RPC or through graph JSON: a node that
// arrives that way has no function, and backends refuse it
// (SupportsOp false, Compute an error wrapping ErrUnsupported).

// CustomTensor is one operand of a custom op as its function sees it:
// the tensor's description and its bytes, from its first byte to its last
// (a view's bytes start at the view's offset; strides are Tensor.Nb).
type CustomTensor struct {
	*Tensor
	Data []byte
}

// CustomFunc computes part ith of nth of a custom node: dst is the
// result, src the sources in order (MAP_CUSTOM1/2/3: a, b, c). The nth
// parts run concurrently and must write disjoint bytes of dst. An error
// fails the graph's compute; a panic is recovered and reported as one.
type CustomFunc func(dst CustomTensor, src []CustomTensor, ith, nth int) error

// CustomOp is the function of a custom node and the number of parts to
// split it in (ggml's n_tasks): at most the backend's threads; NTasks ≤ 0
// (ggml's GGML_N_TASKS_MAX) means as many as the backend has.
type CustomOp struct {
	Fn     CustomFunc
	NTasks int
}

// customNTasksParam is the op-parameter slot where ggml's
// ggml_map_custom*_op_params and ggml_custom_op_params keep n_tasks (after
// the 8-byte function pointer); gogml writes n_tasks there too.
const customNTasksParam = 2

func (c *Context) mapCustom(op Op, fn CustomFunc, nTasks int, inplace bool, srcs ...*Tensor) *Tensor {
	if !c.ok(srcs...) {
		return nil
	}
	if fn == nil {
		return c.opErr(op, ErrGraph, "nil function", srcs...)
	}
	a := srcs[0]
	var t *Tensor
	if inplace {
		if t = c.newView(a, op, a.Ne, a.Nb, 0, " (view)"); t == nil {
			return nil
		}
	} else if t = c.NewTensorStrided(a.Type, a.Ne, nil); t == nil {
		return nil
	}
	t.Op = op
	copy(t.Src[:], srcs)
	t.Custom = &CustomOp{Fn: fn, NTasks: nTasks}
	t.SetOpParamI32(customNTasksParam, int32(max(min(nTasks, 1<<30), -1)))
	return t
}

// MapCustom1 runs fn over a (ggml_map_custom1): the result has a's type
// and shape, and fn sees (result, [a]).
func (c *Context) MapCustom1(a *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom1, fn, nTasks, false, a)
}

// MapCustom1Inplace is MapCustom1 with the result a view of a
// (ggml_map_custom1_inplace).
func (c *Context) MapCustom1Inplace(a *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom1, fn, nTasks, true, a)
}

// MapCustom2 runs fn over a and b (ggml_map_custom2): the result has a's
// type and shape, and fn sees (result, [a, b]).
func (c *Context) MapCustom2(a, b *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom2, fn, nTasks, false, a, b)
}

// MapCustom2Inplace is MapCustom2 with the result a view of a.
func (c *Context) MapCustom2Inplace(a, b *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom2, fn, nTasks, true, a, b)
}

// MapCustom3 runs fn over a, b and d (ggml_map_custom3): the result has
// a's type and shape, and fn sees (result, [a, b, d]).
func (c *Context) MapCustom3(a, b, d *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom3, fn, nTasks, false, a, b, d)
}

// MapCustom3Inplace is MapCustom3 with the result a view of a.
func (c *Context) MapCustom3Inplace(a, b, d *Tensor, fn CustomFunc, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom3, fn, nTasks, true, a, b, d)
}

// Custom runs fn to make a new tensor of type typ and shape ne from up to
// MaxSrc args (ggml_custom_4d); fn sees (result, args).
func (c *Context) Custom(typ Type, ne [MaxDims]int64, args []*Tensor, fn CustomFunc, nTasks int) *Tensor {
	if !c.ok(args...) {
		return nil
	}
	if len(args) > MaxSrc {
		return c.failf("%s: %d arguments, at most %d: %w", OpCustom, len(args), MaxSrc, ErrGraph)
	}
	if fn == nil {
		return c.failf("%s: nil function: %w", OpCustom, ErrGraph)
	}
	t := c.NewOp(OpCustom, typ, ne, args...)
	if t != nil {
		t.Custom = &CustomOp{Fn: fn, NTasks: nTasks}
		t.SetOpParamI32(customNTasksParam, int32(max(min(nTasks, 1<<30), -1)))
	}
	return t
}

// CustomInplace runs fn with a as its result, viewed (ggml_custom_inplace):
// fn sees (result, [a, args...]); at most MaxSrc-1 args.
func (c *Context) CustomInplace(a *Tensor, args []*Tensor, fn CustomFunc, nTasks int) *Tensor {
	if !c.ok(a) || !c.ok(args...) {
		return nil
	}
	if len(args) > MaxSrc-1 {
		return c.failf("%s: %d arguments, at most %d: %w", OpCustom, len(args), MaxSrc-1, ErrGraph)
	}
	return c.mapCustom(OpCustom, fn, nTasks, true, append([]*Tensor{a}, args...)...)
}

// IsCustom reports whether op runs a user function (MAP_CUSTOM1/2/3,
// CUSTOM).
func (op Op) IsCustom() bool {
	return op == OpMapCustom1 || op == OpMapCustom2 || op == OpMapCustom3 || op == OpCustom
}

// String names the custom op for error messages.
func (o *CustomOp) String() string {
	if o == nil {
		return "no function"
	}
	return fmt.Sprintf("custom function, %d tasks", o.NTasks)
}
