package runtime

import (
	"fmt"
	"math/bits"
)

// Context creates tensors (without memory) and records them in creation
// order, as ggml's no_alloc context does. Builder methods return the new
// tensor, or nil after recording the first error; once an error is
// recorded, every further call returns nil and Err reports the error. A
// nil source makes a builder return nil without a new error, so a chain of
// calls needs one check at the end.
type Context struct {
	tensors []*Tensor
	err     error
}

// NewContext returns an empty context.
func NewContext() *Context { return &Context{} }

// Err returns the first error recorded by a builder method.
func (c *Context) Err() error { return c.err }

// Tensors returns the context's tensors in creation order.
func (c *Context) Tensors() []*Tensor { return c.tensors }

// Fail records err (if it is the first) and returns nil, for builders.
func (c *Context) Fail(err error) *Tensor {
	if c.err == nil && err != nil {
		c.err = err
	}
	return nil
}

func (c *Context) failf(format string, args ...any) *Tensor {
	return c.Fail(fmt.Errorf(format, args...))
}

// ok reports whether building may go on: no recorded error and no nil
// among ts.
func (c *Context) ok(ts ...*Tensor) bool {
	if c.err != nil {
		return false
	}
	for _, t := range ts {
		if t == nil {
			return false
		}
	}
	return true
}

func padNe(ne []int64) ([MaxDims]int64, error) {
	var out [MaxDims]int64
	if len(ne) < 1 || len(ne) > MaxDims {
		return out, fmt.Errorf("%w: %d dimensions, want 1 to %d", ErrShape, len(ne), MaxDims)
	}
	for i := range out {
		out[i] = 1
	}
	copy(out[:], ne)
	return out, nil
}

// contiguousStrides computes contiguous strides, failing on overflow.
func contiguousStrides(typ Type, ne [MaxDims]int64) ([MaxDims]uint64, error) {
	var nb [MaxDims]uint64
	nb[0] = typ.Size()
	hi, lo := bits.Mul64(nb[0], uint64(ne[0]/typ.BlockSize()))
	if hi != 0 {
		return nb, fmt.Errorf("%w: row of %d %s elements", ErrOverflow, ne[0], typ)
	}
	nb[1] = lo
	for i := 2; i < MaxDims; i++ {
		hi, lo = bits.Mul64(nb[i-1], uint64(ne[i-1]))
		if hi != 0 {
			return nb, fmt.Errorf("%w: stride of dimension %d", ErrOverflow, i)
		}
		nb[i] = lo
	}
	return nb, nil
}

// NewTensor creates a contiguous tensor of type typ with 1 to 4 element
// counts, each at least 1.
func (c *Context) NewTensor(typ Type, ne ...int64) *Tensor {
	if !c.ok() {
		return nil
	}
	full, err := padNe(ne)
	if err != nil {
		return c.Fail(err)
	}
	return c.NewTensorStrided(typ, full, nil)
}

// NewTensorStrided creates a tensor with explicit strides (nil: contiguous).
func (c *Context) NewTensorStrided(typ Type, ne [MaxDims]int64, nb *[MaxDims]uint64) *Tensor {
	if !c.ok() {
		return nil
	}
	if !typ.Valid() {
		return c.Fail(fmt.Errorf("%w: %d", ErrUnknownType, int32(typ)))
	}
	for i, n := range ne {
		if n < 1 {
			return c.Fail(fmt.Errorf("%w: ne[%d] = %d, want at least 1", ErrShape, i, n))
		}
	}
	if ne[0]%typ.BlockSize() != 0 {
		return c.Fail(fmt.Errorf("%w: ne[0] = %d is not a multiple of %s's block size %d", ErrShape, ne[0], typ, typ.BlockSize()))
	}
	var strides [MaxDims]uint64
	if nb != nil {
		strides = *nb
	} else {
		s, err := contiguousStrides(typ, ne)
		if err != nil {
			return c.Fail(err)
		}
		strides = s
	}
	if err := checkShape(typ, ne, strides); err != nil {
		return c.Fail(err)
	}
	t := &Tensor{Type: typ, Ne: ne, Nb: strides}
	c.tensors = append(c.tensors, t)
	return t
}

// NewTensor1D creates a 1-dimensional tensor.
func (c *Context) NewTensor1D(typ Type, ne0 int64) *Tensor { return c.NewTensor(typ, ne0) }

// NewTensor2D creates a 2-dimensional tensor.
func (c *Context) NewTensor2D(typ Type, ne0, ne1 int64) *Tensor { return c.NewTensor(typ, ne0, ne1) }

// NewTensor3D creates a 3-dimensional tensor.
func (c *Context) NewTensor3D(typ Type, ne0, ne1, ne2 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-dimensional tensor.
func (c *Context) NewTensor4D(typ Type, ne0, ne1, ne2, ne3 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2, ne3)
}

// NewOp creates the result tensor of op over srcs, with shape ne and
// contiguous strides. It is the building block of the graph API.
func (c *Context) NewOp(op Op, typ Type, ne [MaxDims]int64, srcs ...*Tensor) *Tensor {
	if !c.ok(srcs...) {
		return nil
	}
	if len(srcs) > MaxSrc {
		return c.failf("%s: %d sources, at most %d: %w", op, len(srcs), MaxSrc, ErrGraph)
	}
	t := c.NewTensorStrided(typ, ne, nil)
	if t == nil {
		if c.err != nil {
			c.err = fmt.Errorf("%s: %w", op, c.err)
		}
		return nil
	}
	t.Op = op
	copy(t.Src[:], srcs)
	return t
}

// newView creates a view of a's memory with the given type, shape and
// strides at offset bytes into a, checking that it lies inside a's base.
func (c *Context) newView(a *Tensor, op Op, ne [MaxDims]int64, nb [MaxDims]uint64, offset uint64, suffix string) *Tensor {
	base, offs := a, offset
	if a.ViewSrc != nil {
		base, offs = a.ViewSrc, a.ViewOffs+offset
		if offs < offset {
			return c.failf("view of %q: %w: offset", a.Name, ErrOverflow)
		}
	}
	for i, n := range ne {
		if n < 1 {
			return c.failf("view of %q: %w: ne[%d] = %d", a.Name, ErrShape, i, n)
		}
	}
	if err := checkShape(a.Type, ne, nb); err != nil {
		return c.failf("view of %q: %w", a.Name, err)
	}
	v := &Tensor{Type: a.Type, Ne: ne, Nb: nb, Op: op, ViewSrc: base, ViewOffs: offs, Preallocated: base.Preallocated}
	n := v.NBytes()
	if bn := base.NBytes(); offs > bn || n > bn-offs {
		return c.failf("view of %q: %d bytes at offset %d outside its base %q of %d bytes: %w", a.Name, n, offs, base.Name, bn, ErrView)
	}
	v.Src[0] = a
	v.Name = a.Name + suffix
	c.tensors = append(c.tensors, v)
	return v
}

func (c *Context) view(a *Tensor, ne [MaxDims]int64, nb [MaxDims]uint64, offset uint64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	v := c.newView(a, OpView, ne, nb, offset, " (view)")
	if v != nil {
		v.OpParams[0] = int32(uint32(offset))
		v.OpParams[1] = int32(uint32(offset >> 32))
	}
	return v
}

// View1D views ne0 elements of a starting offset bytes in.
func (c *Context) View1D(a *Tensor, ne0 int64, offset uint64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, 1, 1, 1}
	es := a.Type.Size()
	return c.view(a, ne, [MaxDims]uint64{es, a.Type.RowSize(ne0), a.Type.RowSize(ne0), a.Type.RowSize(ne0)}, offset)
}

// View2D views an ne0×ne1 matrix of a with row stride nb1.
func (c *Context) View2D(a *Tensor, ne0, ne1 int64, nb1, offset uint64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, ne1, 1, 1}
	return c.view(a, ne, [MaxDims]uint64{a.Type.Size(), nb1, nb1 * uint64(ne1), nb1 * uint64(ne1)}, offset)
}

// View3D views an ne0×ne1×ne2 block of a with strides nb1, nb2.
func (c *Context) View3D(a *Tensor, ne0, ne1, ne2 int64, nb1, nb2, offset uint64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, ne1, ne2, 1}
	return c.view(a, ne, [MaxDims]uint64{a.Type.Size(), nb1, nb2, nb2 * uint64(ne2)}, offset)
}

// View4D views an ne0×ne1×ne2×ne3 block of a with strides nb1, nb2, nb3.
func (c *Context) View4D(a *Tensor, ne0, ne1, ne2, ne3 int64, nb1, nb2, nb3, offset uint64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, ne1, ne2, ne3}
	return c.view(a, ne, [MaxDims]uint64{a.Type.Size(), nb1, nb2, nb3}, offset)
}

// ViewTensor views all of a with a's shape and strides.
func (c *Context) ViewTensor(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.view(a, a.Ne, a.Nb, 0)
}

// Reshape views contiguous a with shape ne (same element count).
func (c *Context) Reshape(a *Tensor, ne ...int64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	full, err := padNe(ne)
	if err != nil {
		return c.failf("reshape %q: %w", a.Name, err)
	}
	if !a.IsContiguous() {
		return c.failf("reshape %q: %w: source is not contiguous", a.Name, ErrShape)
	}
	if full[0]*full[1]*full[2]*full[3] != a.Nelements() || full[0] < 1 || full[1] < 1 || full[2] < 1 || full[3] < 1 {
		return c.failf("reshape %q from %v to %v: %w: element counts differ", a.Name, a.Ne, full, ErrShape)
	}
	if full[0]%a.Type.BlockSize() != 0 {
		return c.failf("reshape %q: %w: ne[0] not a multiple of the block size", a.Name, ErrShape)
	}
	nb, err := contiguousStrides(a.Type, full)
	if err != nil {
		return c.Fail(err)
	}
	return c.newView(a, OpReshape, full, nb, 0, " (reshaped)")
}

// Permute reorders a's dimensions: dimension i of a becomes dimension
// axes[i] of the result.
func (c *Context) Permute(a *Tensor, ax0, ax1, ax2, ax3 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	axes := [MaxDims]int{ax0, ax1, ax2, ax3}
	seen := 0
	for _, ax := range axes {
		if ax < 0 || ax >= MaxDims || seen&(1<<ax) != 0 {
			return c.failf("permute %q: %w: axes %v are not a permutation of 0..3", a.Name, ErrShape, axes)
		}
		seen |= 1 << ax
	}
	var ne [MaxDims]int64
	var nb [MaxDims]uint64
	for i, ax := range axes {
		ne[ax] = a.Ne[i]
		nb[ax] = a.Nb[i]
	}
	v := c.newView(a, OpPermute, ne, nb, 0, " (permuted)")
	if v != nil {
		for i, ax := range axes {
			v.OpParams[i] = int32(ax)
		}
	}
	return v
}

// Transpose swaps dimensions 0 and 1 of a.
func (c *Context) Transpose(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne, nb := a.Ne, a.Nb
	ne[0], ne[1] = ne[1], ne[0]
	nb[0], nb[1] = nb[1], nb[0]
	return c.newView(a, OpTranspose, ne, nb, 0, " (transposed)")
}
