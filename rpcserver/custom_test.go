package rpcserver

import (
	"math"
	"testing"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// TestCustomOpsRefused: custom ops whose op parameters carry what a ggml
// client puts there (a function pointer, n_tasks, userdata) are refused
// (NaN output), never called, and the connection keeps serving.
func TestCustomOpsRefused(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4)
	for i, op := range []runtime.Op{runtime.OpMapCustom1, runtime.OpMapCustom2, runtime.OpMapCustom3, runtime.OpCustom} {
		srcs := []*rpcwire.Tensor{&x, &x, &x}[:map[runtime.Op]int{runtime.OpMapCustom1: 1, runtime.OpMapCustom2: 2}[op]+1]
		z := opTensor(b, 64+uint64(i)*64, op, srcs, 4)
		z.OpParams[0], z.OpParams[1] = 0x41414141, 0x7fff // "function pointer"
		z.OpParams[2] = -1                                // n_tasks
		z.OpParams[4], z.OpParams[5] = 0x42424242, 0x7fff // userdata
		c.set(&x, 0, floats(1, 2, 3, 4))
		c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
		for _, v := range toFloats(c.get(&z, 0, 16)) {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("%s: output %v, want NaN", op, v)
			}
		}
	}
	y := opTensor(b, 512, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
	y.OpParams[0] = int32(math.Float32bits(3))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&y}, &x, &y))
	if got := toFloats(c.get(&y, 0, 16)); got[3] != 12 {
		t.Fatalf("scale after custom ops: %v", got)
	}
}
