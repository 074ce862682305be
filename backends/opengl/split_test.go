//go:build opengl

package opengl

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// TestSplitBeyondMaxSize builds weights and a graph whose tensors together
// exceed the device's GL_MAX_SHADER_STORAGE_BLOCK_SIZE: the context-tensor
// allocator must split the weights over several GL buffers, and the graph
// allocator must chunk the intermediate results; the result must still be
// right.
func TestSplitBeyondMaxSize(t *testing.T) {
	t.Run("device", func(t *testing.T) { testSplit(t, Config{}) })
	// The same with the limit lowered, so that every device (whatever its
	// own limit) shows the split, quickly.
	t.Run("max4MiB", func(t *testing.T) { testSplit(t, Config{MaxBufferSize: 4 << 20, Upload: UploadSubData}) })
}

func testSplit(t *testing.T, cfg Config) {
	b := open(t, cfg)
	bt := b.DefaultBufferType()
	max := bt.MaxSize()
	if max > 512<<20 {
		t.Skipf("max buffer size %d MiB: the test would need too much memory (the max4MiB case covers splitting)", max>>20)
	}
	// Tensors of about 3/8 of the max size: three weights and three live
	// intermediate results each exceed one buffer.
	n := int64(max*3/8) / 4
	n -= n % 1024
	wctx := runtime.NewContext()
	w := make([]*runtime.Tensor, 3)
	for i := range w {
		w[i] = wctx.NewTensor1D(runtime.TypeF32, n)
		w[i].Name = "w" + string(rune('0'+i))
	}
	wbuf, err := gallocr.AllocCtxTensors(wctx, bt)
	if err != nil {
		t.Fatal(err)
	}
	defer wbuf.Free()
	mb, ok := wbuf.(*runtime.MultiBuffer)
	if !ok || len(mb.Parts()) < 2 {
		t.Fatalf("weights of %d bytes in %T, want a multi-buffer of at least 2 parts (max size %d)", 3*4*n, wbuf, max)
	}
	t.Logf("weights: %d MiB in %d GL buffers of at most %d MiB", 3*4*n>>20, len(mb.Parts()), max>>20)
	val := func(k int, i int64) float32 { return float32((i*int64(2*k+3)+int64(k))%1001)/500 - 1 }
	data := make([]byte, 4*n)
	for k, x := range w {
		for i := int64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(val(k, i)))
		}
		if err := runtime.SetTensorData(x, data, 0); err != nil {
			t.Fatal(err)
		}
	}

	// out = (w0+w1) + ((w1*w2) + (w0-w2)): three intermediates live at once.
	c := runtime.NewContext()
	y1 := c.Add(w[0], w[1])
	y2 := c.Mul(w[1], w[2])
	y3 := c.Sub(w[0], w[2])
	out := c.Add(y1, c.Add(y2, y3))
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	out.SetOutput()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	alloc, err := gallocr.New(bt)
	if err != nil {
		t.Fatal(err)
	}
	defer alloc.Free()
	if err := alloc.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	chunks := alloc.Buffers(0)
	var total uint64
	for _, cb := range chunks {
		total += cb.Size()
		if cb.Size() > max {
			t.Fatalf("compute chunk of %d bytes exceeds the max %d", cb.Size(), max)
		}
	}
	if len(chunks) < 2 {
		t.Fatalf("compute memory in %d buffer(s), want at least 2", len(chunks))
	}
	t.Logf("compute: %d MiB in %d GL buffers", total>>20, len(chunks))
	if err := b.Compute(g); err != nil {
		t.Fatal(err)
	}
	if err := runtime.GetTensorData(out, data, 0); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := int64(0); i < n; i++ {
		a0, a1, a2 := val(0, i), val(1, i), val(2, i)
		want := (a0 + a1) + (a1*a2 + (a0 - a2))
		got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if got != want {
			if bad < 5 {
				t.Errorf("element %d: got %g, want %g", i, got, want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, n)
	}
}
