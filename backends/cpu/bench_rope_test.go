package cpu_test

import (
	"encoding/binary"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// BenchmarkRope times ROPE on f32 [128, 32, 512] with 128 rotated
// dimensions and positions 0..511 (benchvsggml's rope and rope_neox), as
// BenchmarkFlashAttnDecode.
func BenchmarkRope(b *testing.B) {
	rp := runtime.RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	for _, m := range []struct {
		name string
		mode int32
	}{{"normal", runtime.RopeNormal}, {"neox", runtime.RopeNeoX}} {
		b.Run(m.name, func(b *testing.B) {
			benchThreads(b, func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.RopeExt(ctx.NewTensor3D(runtime.TypeF32, 128, 32, 512), ctx.NewTensor1D(runtime.TypeI32, 512), nil, 128, m.mode, rp)
			})
		})
	}
}

// fillPositions sets every i32 leaf of g to 0, 1, 2, ... (positions).
func fillPositions(b *testing.B, g *runtime.Graph) {
	b.Helper()
	for _, n := range g.Nodes() {
		for _, s := range n.Src {
			if s == nil || s.Op != runtime.OpNone || s.Type != runtime.TypeI32 {
				continue
			}
			data := make([]byte, s.NBytes())
			for i := range len(data) / 4 {
				binary.LittleEndian.PutUint32(data[4*i:], uint32(i))
			}
			if err := runtime.SetTensorData(s, data, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
}
