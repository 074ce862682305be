// Command mlp is the smallest complete gogml program: a two-layer
// perceptron, y = W2·relu(W1·x + b1) + b2, for a batch of inputs on the
// CPU backend. It shows every step a program takes:
//
//  1. describe the weights in a context and give them memory
//     (gallocr.AllocCtxTensors), then upload their values;
//  2. build the graph with the Context's op builders;
//  3. plan and place its tensors with a graph allocator (gallocr);
//  4. upload the inputs, compute on the backend, read the output.
//
// Run it with: go run ./examples/mlp
package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

const (
	nIn     = 4 // input features
	nHidden = 8 // hidden units
	nOut    = 3 // outputs
	nBatch  = 2 // inputs computed at once
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
}

// floats returns n values following a simple pattern, so the example needs
// no weight file.
func floats(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = scale * float32((i*7)%11-5) / 5
	}
	return v
}

// toBytes and fromBytes convert between float32 values and tensor bytes.
func toBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func fromBytes(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func run(w io.Writer) error {
	// The backend computes; its buffer type says where tensors live.
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	bt := be.DefaultBufferType()

	// 1. Weights. ggml's MulMat(a, b) multiplies each row of b by each row
	// of a, so a matrix from n inputs to m outputs has ne = {n, m}.
	wctx := runtime.NewContext()
	w1 := wctx.NewTensor2D(runtime.TypeF32, nIn, nHidden)
	b1 := wctx.NewTensor1D(runtime.TypeF32, nHidden)
	w2 := wctx.NewTensor2D(runtime.TypeF32, nHidden, nOut)
	b2 := wctx.NewTensor1D(runtime.TypeF32, nOut)
	if err := wctx.Err(); err != nil {
		return err
	}
	wbuf, err := gallocr.AllocCtxTensors(wctx, bt)
	if err != nil {
		return err
	}
	defer wbuf.Free()
	for _, p := range []struct {
		t     *runtime.Tensor
		scale float32
	}{{w1, 0.5}, {b1, 0.1}, {w2, 0.5}, {b2, 0.1}} {
		if err := runtime.SetTensorData(p.t, toBytes(floats(int(p.t.Nelements()), p.scale)), 0); err != nil {
			return err
		}
	}

	// 2. The graph: x holds nBatch inputs of nIn features (ne = {nIn, nBatch}).
	ctx := runtime.NewContext()
	x := ctx.NewTensor2D(runtime.TypeF32, nIn, nBatch)
	if x == nil {
		return ctx.Err()
	}
	x.SetInput()
	h := ctx.ReLU(ctx.Add(ctx.MulMat(w1, x), b1)) // {nHidden, nBatch}; b1 broadcasts over the batch
	y := ctx.Add(ctx.MulMat(w2, h), b2)           // {nOut, nBatch}
	if err := ctx.Err(); err != nil {
		return err // a shape mismatch is reported here, naming the tensors
	}
	y.SetOutput()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(y); err != nil {
		return err
	}

	// 3. Place the graph's tensors in a compute buffer.
	alloc, err := gallocr.New(bt)
	if err != nil {
		return err
	}
	defer alloc.Free()
	if err := alloc.AllocGraph(g); err != nil {
		return err
	}

	// 4. Inputs in, compute, output out.
	in := []float32{1, 0, -1, 2, 0.5, 0.5, 0.5, 0.5}
	if err := runtime.SetTensorData(x, toBytes(in), 0); err != nil {
		return err
	}
	if err := be.Compute(g); err != nil {
		return err
	}
	out := make([]byte, y.NBytes())
	if err := runtime.GetTensorData(y, out, 0); err != nil {
		return err
	}
	size, _ := alloc.BufferSize(0)
	fmt.Fprintf(w, "graph: %d nodes, compute buffer %d bytes\n", g.NumNodes(), size)
	ys := fromBytes(out)
	for i := 0; i < nBatch; i++ {
		fmt.Fprintf(w, "y[%d] = %.4f\n", i, ys[i*nOut:(i+1)*nOut])
	}
	return nil
}
