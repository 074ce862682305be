package gallocr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

func TestAllocatorBadInput(t *testing.T) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	odd := &runtime.VirtualBufferType{TypeName: "odd", Align: 24, Max: runtime.NoMaxSize}
	g, _ := smallGraph(t)
	n := g.NumNodes()
	ids := func(v int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"empty buffer list", func() error { _, err := gallocr.NewN(nil); return err }, gallocr.ErrBufferID},
		{"nil buffer type", func() error { _, err := gallocr.NewN([]runtime.BufferType{nil}); return err }, nil},
		{"alignment not a power of two", func() error { _, err := gallocr.New(odd); return err }, runtime.ErrAlignment},
		{"node buffer id out of range", func() error {
			a, _ := gallocr.NewN([]runtime.BufferType{host, host})
			return a.ReserveN(g, ids(2), nil)
		}, gallocr.ErrBufferID},
		{"negative node buffer id", func() error {
			a, _ := gallocr.NewN([]runtime.BufferType{host})
			return a.ReserveN(g, ids(-1), nil)
		}, gallocr.ErrBufferID},
		{"node buffer ids of wrong length", func() error {
			a, _ := gallocr.NewN([]runtime.BufferType{host})
			return a.ReserveN(g, []int{0}, nil)
		}, gallocr.ErrBufferID},
		{"leaf buffer id out of range", func() error {
			a, _ := gallocr.NewN([]runtime.BufferType{host})
			return a.ReserveN(g, nil, make([]int, g.NumLeafs()+1))
		}, gallocr.ErrBufferID},
		{"multi-buffer alloc without reserve", func() error {
			a, _ := gallocr.NewN([]runtime.BufferType{host, host})
			return a.AllocGraph(g)
		}, gallocr.ErrNeedsReserve},
		{"buffer size of unknown entry", func() error {
			a, _ := gallocr.New(host)
			_, err := a.BufferSize(3)
			return err
		}, gallocr.ErrBufferID},
		{"dyn alignment", func() error { _, err := gallocr.NewDyn(3, runtime.NoMaxSize); return err }, runtime.ErrAlignment},
		{"dyn double free", func() error {
			d, _ := gallocr.NewDyn(16, runtime.NoMaxSize)
			at, _ := d.Alloc(64)
			d.Alloc(64)
			if err := d.Free(at, 64); err != nil {
				return err
			}
			return d.Free(at, 64)
		}, runtime.ErrOutOfBounds},
		{"dyn oversized request", func() error {
			d, _ := gallocr.NewDyn(16, runtime.NoMaxSize)
			_, err := d.Alloc(1 << 63)
			return err
		}, runtime.ErrOverflow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %q does not wrap %v", err, tc.want)
			}
		})
	}
}

// A plan needs no device: buffer types described by their parameters are
// enough.
func ExamplePlanGraph() {
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, 256)
	x.Name = "x"
	x.SetInput()
	y := ctx.Sqr(x) // may reuse x's memory in place
	y.Name = "y"
	z := ctx.Scale(y, 2)
	z.Name = "z"
	z.SetOutput()
	g := runtime.NewGraph()
	g.BuildForwardExpand(z)

	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	pl, err := gallocr.PlanGraph(g, []runtime.BufferType{host}, gallocr.PlanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range []*runtime.Tensor{x, y, z} {
		p, _ := pl.Placement(t)
		fmt.Printf("%s: offset %d, %d bytes\n", t.Name, p.Offset, p.Size)
	}
	fmt.Println("buffer:", pl.Chunks[0], "lower bound:", pl.LowerBound()[0])
	// Output:
	// x: offset 0, 1024 bytes
	// y: offset 0, 1024 bytes
	// z: offset 0, 1024 bytes
	// buffer: [1024] lower bound: 1024
}
