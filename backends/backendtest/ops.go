package backendtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// Error bounds of the op checks, as normalized mean squared error
// sum((x-ref)²)/sum(ref²) over the finite elements, the measure of ggml's
// test-backend-ops.
const (
	// NMSEF32 bounds ops whose tensors are all f32 (or integer).
	NMSEF32 = 1e-7
	// NMSEHalf bounds element-wise, copy and row ops that read or write
	// f16 or bf16 tensors: one rounding step of the narrow type may differ.
	NMSEHalf = 1e-6
	// NMSEQuant bounds MUL_MAT with non-f32 operands and every op that
	// reads or writes q4_0/q8_0 blocks (test-backend-ops' mul_mat bound).
	NMSEQuant = 5e-4
)

// OpOption configures Run and RunOps.
type OpOption func(*opConfig)

type opConfig struct {
	reduced bool
	buffers []BufferOption
}

// Reduced runs a smaller op table (one shape per op and type), for slow
// modes such as -race.
func Reduced() OpOption { return func(c *opConfig) { c.reduced = true } }

// WithBufferOptions passes options to RunBuffers.
func WithBufferOptions(opts ...BufferOption) OpOption {
	return func(c *opConfig) { c.buffers = append(c.buffers, opts...) }
}

// Run is the whole conformance suite for backend be: RunBuffers on its
// default buffer type, then RunOps.
func Run(t *testing.T, be runtime.Backend, opts ...OpOption) {
	t.Helper()
	var c opConfig
	for _, o := range opts {
		o(&c)
	}
	t.Run("Buffers", func(t *testing.T) { RunBuffers(t, be.DefaultBufferType(), c.buffers...) })
	RunOps(t, be, opts...)
}

// RunOps checks every op case the backend claims (SupportsOp on every node
// of the case's graph) against the reference kernels of package
// cpukernels run on host memory: over odd sizes, broadcasting,
// non-contiguous views, permuted inputs and the types f32, f16, bf16,
// q4_0 and q8_0. Each case checks the result and every input tensor
// within the case's NMSE bound, NaN and Inf positions, and guard bytes
// around and between all tensors. Cases whose result may be computed in
// place (runtime.Op.CanInplace) run again with the result placed at the
// memory of each source of the same layout. Each case is a subtest; cases
// the backend does not claim are skipped and listed in the log.
func RunOps(t *testing.T, be runtime.Backend, opts ...OpOption) {
	t.Helper()
	var c opConfig
	for _, o := range opts {
		o(&c)
	}
	cases := append(opCases(c.reduced), typeCases(c.reduced)...)
	claimed := map[string]bool{}
	var skipped []string
	for _, oc := range cases {
		oc := oc
		ok := t.Run(oc.name, func(t *testing.T) {
			r := runOpCase(t, be, oc, -1)
			if r.skipped != "" {
				skipped = append(skipped, oc.name+" ("+r.skipped+")")
				t.Skip(r.skipped)
			}
			claimed[r.op] = true
			for _, j := range r.aliasable {
				t.Run(fmt.Sprintf("alias_src%d", j), func(t *testing.T) { runOpCase(t, be, oc, j) })
			}
		})
		if !ok && testing.Short() {
			break
		}
	}
	var ops []string
	for op := range claimed {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	t.Logf("ops checked on %s: %s", be.Name(), strings.Join(ops, " "))
	if len(skipped) > 0 {
		t.Logf("cases skipped (not claimed by %s): %s", be.Name(), strings.Join(skipped, ", "))
	}
}

// opCase is one graph to check: build returns its result tensor.
type opCase struct {
	name  string
	build func(b *caseBuilder) *runtime.Tensor
	nmse  float64
}

// caseBuilder creates a case's input tensors and their random contents.
type caseBuilder struct {
	*runtime.Context
	rng  *rand.Rand
	data map[*runtime.Tensor][]byte
}

// fill gives tensor x (contiguous) the values from gen, converted to its
// type.
func (b *caseBuilder) fill(x *runtime.Tensor, gen func(i int) float32) *runtime.Tensor {
	if x == nil {
		return nil
	}
	vals := make([]float32, x.Nelements())
	for i := range vals {
		vals[i] = gen(i)
	}
	buf := make([]byte, x.NBytes())
	if x.Type == runtime.TypeI32 {
		for i, v := range vals {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(int32(v)))
		}
	} else if !cpukernels.CanQuantize(x.Type) {
		gridBlocks(b.rng, x.Type, buf)
	} else if err := cpukernels.FromFloat(x.Type, vals, buf); err != nil {
		b.Fail(err)
		return nil
	}
	b.data[x] = buf
	x.Name = fmt.Sprintf("in%d", len(b.data))
	return x
}

// in returns a contiguous input with standard normal values.
func (b *caseBuilder) in(typ runtime.Type, ne ...int64) *runtime.Tensor {
	return b.fill(b.NewTensor(typ, ne...), func(int) float32 { return float32(b.rng.NormFloat64()) })
}

// uniform returns a contiguous input with values uniform in [lo, hi).
func (b *caseBuilder) uniform(typ runtime.Type, lo, hi float32, ne ...int64) *runtime.Tensor {
	return b.fill(b.NewTensor(typ, ne...), func(int) float32 { return lo + (hi-lo)*b.rng.Float32() })
}

// ints returns an i32 input with values uniform in [0, n).
func (b *caseBuilder) ints(n int, ne ...int64) *runtime.Tensor {
	return b.fill(b.NewTensor(runtime.TypeI32, ne...), func(int) float32 { return float32(b.rng.IntN(n)) })
}

// padded returns a normal input of shape ne viewed out of a larger tensor
// whose rows are longer: a non-contiguous view with dense rows.
func (b *caseBuilder) padded(typ runtime.Type, ne ...int64) *runtime.Tensor {
	full := [4]int64{1, 1, 1, 1}
	copy(full[:], ne)
	pad := typ.BlockSize()
	base := b.in(typ, full[0]+pad, full[1]+1, full[2], full[3])
	if base == nil {
		return nil
	}
	return b.View4D(base, full[0], full[1], full[2], full[3], base.Nb[1], base.Nb[2], base.Nb[3], base.Nb[1]+typ.RowSize(pad))
}

// permuted returns a normal input of shape ne whose memory order is that
// of permutation axes (ggml_permute of a contiguous tensor).
func (b *caseBuilder) permuted(typ runtime.Type, axes [4]int, ne ...int64) *runtime.Tensor {
	full := [4]int64{1, 1, 1, 1}
	copy(full[:], ne)
	// Source dimension i becomes result dimension axes[i].
	var src [4]int64
	for i, ax := range axes {
		src[i] = full[ax]
	}
	base := b.in(typ, src[:]...)
	return b.Permute(base, axes[0], axes[1], axes[2], axes[3])
}

// caseResult says what one run of a case found.
type caseResult struct {
	op        string
	skipped   string
	aliasable []int
}

// runOpCase builds oc, computes it on be and with the reference, and
// compares. With alias ≥ 0 the result is placed at the memory of source
// alias instead of its own.
func runOpCase(t *testing.T, be runtime.Backend, oc opCase, alias int) caseResult {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(oc.name))
	b := &caseBuilder{Context: runtime.NewContext(), rng: rand.New(rand.NewPCG(h.Sum64(), 0x5eed)), data: map[*runtime.Tensor][]byte{}}
	out := oc.build(b)
	if err := b.Err(); err != nil {
		t.Fatalf("building the case: %v", err)
	}
	out.Name = "result"
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	for _, l := range g.Leafs() {
		if b.data[l] == nil {
			t.Fatalf("case bug: leaf %s has no data", l)
		}
	}
	res := caseResult{op: out.Op.String()}
	if out.Op == runtime.OpUnary {
		res.op += "_" + out.UnaryOp().String()
	}
	for _, n := range g.Nodes() {
		if !n.Op.IsViewOp() && !be.SupportsOp(n) {
			res.skipped = fmt.Sprintf("%s %s", n.Op, n)
			return res
		}
	}
	if out.Op.CanInplace() && !out.IsView() {
		for j, s := range out.Src {
			if s != nil && !s.IsView() && runtime.SameLayout(s, out) && b.data[s] != nil {
				res.aliasable = append(res.aliasable, j)
			}
		}
	}

	// Expected results on host memory.
	ref := cpukernels.HostMem{}
	for x, d := range b.data {
		ref[x] = bytes.Clone(d)
	}
	if err := ref.ComputeGraph(g); err != nil {
		t.Fatalf("reference: %v", err)
	}

	// Place every base tensor in one buffer, with guard bytes around each.
	bt := be.DefaultBufferType()
	align := bt.Alignment()
	guard := runtime.AlignUp(64, align)
	var bases []*runtime.Tensor
	for _, x := range append(append([]*runtime.Tensor{}, g.Leafs()...), g.Nodes()...) {
		if !x.IsView() && !(alias >= 0 && x == out) {
			bases = append(bases, x)
		}
	}
	offs := make([]uint64, len(bases))
	size := guard
	for i, x := range bases {
		offs[i] = size
		size = runtime.AlignUp(size+bt.AllocSize(x), align) + guard
	}
	buf, err := bt.AllocBuffer(size)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	canvas := runtime.NewContext().NewTensor(runtime.TypeI8, int64(size))
	canvas.Name = "canvas"
	if err := runtime.TensorAlloc(buf, canvas, 0); err != nil {
		t.Fatal(err)
	}
	fill := make([]byte, size)
	for i := range fill {
		fill[i] = byte(i*131 + 0x5b)
	}
	if err := runtime.SetTensorData(canvas, fill, 0); err != nil {
		t.Fatal(err)
	}
	for i, x := range bases {
		if err := runtime.TensorAlloc(buf, x, offs[i]); err != nil {
			t.Fatal(err)
		}
		if d := b.data[x]; d != nil {
			if err := runtime.SetTensorData(x, d, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if alias >= 0 {
		s := out.Src[alias]
		out.Buffer, out.Offset = s.Buffer, s.Offset
		if err := buf.InitTensor(out); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range g.Nodes() {
		if x.IsView() {
			if err := runtime.ViewInit(x); err != nil {
				t.Fatal(err)
			}
		}
	}

	if err := be.Compute(g); err != nil {
		t.Fatalf("compute: %v", err)
	}

	// Compare the result, then (unless aliased) every base tensor.
	checkTensor(t, out, ref, oc.nmse)
	if alias < 0 {
		for _, x := range bases {
			if x != out {
				checkTensor(t, x, ref, oc.nmse)
			}
		}
	}
	// Guard bytes: everything outside the tensors keeps its pattern.
	after := make([]byte, size)
	if err := runtime.GetTensorData(canvas, after, 0); err != nil {
		t.Fatal(err)
	}
	// A tensor owns its alloc size, padding included: a backend may write
	// there (ggml's CUDA backend zeroes the padding of quantized rows).
	owned := make([]bool, size)
	for _, x := range bases {
		for p := x.Offset; p < x.Offset+bt.AllocSize(x); p++ {
			owned[p] = true
		}
	}
	for p := range after {
		if !owned[p] && after[p] != fill[p] {
			t.Fatalf("guard byte %d changed (%#02x, want %#02x): out-of-bounds write", p, after[p], fill[p])
		}
	}
	return res
}

// checkTensor compares x on the backend with the reference: NaN and Inf
// where the reference has them, and NMSE over the rest within bound.
// Integer tensors must match byte for byte.
func checkTensor(t *testing.T, x *runtime.Tensor, ref cpukernels.HostMem, bound float64) {
	t.Helper()
	want, err := ref.Mem(x)
	if err != nil {
		t.Fatalf("reference %s: %v", x, err)
	}
	want = want[:x.NBytes()]
	got := make([]byte, x.NBytes())
	if err := runtime.GetTensorData(x, got, 0); err != nil {
		t.Fatalf("read %s: %v", x, err)
	}
	if !cpukernels.IsRowType(x.Type) {
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: bytes differ from the reference", x)
		}
		return
	}
	gf, err := cpukernels.ReadF32(x, got)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := cpukernels.ReadF32(x, want)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for i := range wf {
		w, g := float64(wf[i]), float64(gf[i])
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if !(math.IsNaN(w) && math.IsNaN(g)) && w != g {
				t.Fatalf("%s: element %d = %g, reference %g", x, i, g, w)
			}
			continue
		case math.IsNaN(g) || math.IsInf(g, 0):
			t.Fatalf("%s: element %d = %g, reference %g", x, i, g, w)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	nmse := 0.0
	if num > 0 {
		nmse = num / den // +Inf when the reference is all zero
	}
	if !(nmse <= bound) {
		t.Fatalf("%s: NMSE %.3g above %.1g", x, nmse, bound)
	}
}
