package vec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQGemmQ4_KTile checks the q4_K tile (at the level in use) and its
// portable form bit for bit against the portable row dot dotQ4_K, on
// full and partial panels with padded strides.
func TestQGemmQ4_KTile(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct{ rows, nb, pad, ypad int }{
		{16, 1, 0, 0}, {16, 3, 7, 5}, {5, 2, 0, 1}, {1, 1, 3, 0}, {16, 16, 0, 0}, {13, 9, 1, 3},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.rows, c.nb), func(t *testing.T) {
			stride := c.nb*Q4_KBlockSize + c.pad
			w := make([]byte, (c.rows-1)*stride+c.nb*Q4_KBlockSize)
			for i := range c.rows {
				copy(w[i*stride:], randKW(r, c.nb, Q4_KBlockSize, 0))
			}
			ys := c.nb*Q8_KBlockSize + c.ypad
			y := make([]byte, (QGemmCols-1)*ys+c.nb*Q8_KBlockSize)
			for i := range QGemmCols {
				copy(y[i*ys:], randQ8K(r, c.nb))
			}
			panel := make([]byte, QGemmQ4_KPanelBytes(c.nb))
			for i := range panel {
				panel[i] = 0xa5 // the packer must write every byte
			}
			if err := PackQ4_KPanel(panel, w, stride, c.rows, c.nb); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, len(panel))
			packQ4_KPanelGo(want, w, stride, c.rows, c.nb)
			if !bytes.Equal(panel, want) {
				t.Fatalf("packed panel differs from the portable packer's")
			}
			out := make([]float32, QGemmCols*QGemmRows)
			if err := QGemmQ4_KTile(out, panel, y, ys, c.nb); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, len(out))
			qkTileQ4_KGo(ref, panel, y, ys, c.nb)
			for col := range QGemmCols {
				for row := range QGemmRows {
					var want float32
					if row < c.rows {
						want = dotQ4_K(w[row*stride:], y[col*ys:], c.nb)
					}
					g, p := out[col*QGemmRows+row], ref[col*QGemmRows+row]
					if math.Float32bits(g) != math.Float32bits(want) || math.Float32bits(p) != math.Float32bits(want) {
						t.Fatalf("[%d,%d] = %v (portable tile %v), want %v", col, row, g, p, want)
					}
				}
			}
		})
	}
}

// TestQGemmQ4_KErrors checks that bad shapes are errors, not faults.
func TestQGemmQ4_KErrors(t *testing.T) {
	const nb = 2
	w := make([]byte, QGemmRows*nb*Q4_KBlockSize)
	panel := make([]byte, QGemmQ4_KPanelBytes(nb))
	y := make([]byte, QGemmCols*nb*Q8_KBlockSize)
	out := make([]float32, QGemmCols*QGemmRows)
	ys := nb * Q8_KBlockSize
	for _, c := range []struct {
		name string
		err  error
	}{
		{"short panel", PackQ4_KPanel(panel[:len(panel)-1], w, nb*Q4_KBlockSize, QGemmRows, nb)},
		{"short weights", PackQ4_KPanel(panel, w[:len(w)-1], nb*Q4_KBlockSize, QGemmRows, nb)},
		{"too many rows", PackQ4_KPanel(panel, w, nb*Q4_KBlockSize, QGemmRows+1, nb)},
		{"short stride", PackQ4_KPanel(panel, w, nb*Q4_KBlockSize-1, 2, nb)},
		{"zero blocks", QGemmQ4_KTile(out, panel, y, ys, 0)},
		{"short out", QGemmQ4_KTile(out[:127], panel, y, ys, nb)},
		{"short tile panel", QGemmQ4_KTile(out, panel[:len(panel)-1], y, ys, nb)},
		{"short activations", QGemmQ4_KTile(out, panel, y[:len(y)-1], ys, nb)},
		{"short activation stride", QGemmQ4_KTile(out, panel, y, ys-1, nb)},
		{"huge activation stride", QGemmQ4_KTile(out, panel, y, math.MaxInt/2, nb)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
}

// BenchmarkQKGemm compares, for one 16-row panel of q4_K weights at
// k = 4096 and 8 q8_K activation rows, the panel's packing, the tile, and
// DotQ4_KMat on the same 16×8 products (CPU time: the machine is shared).
func BenchmarkQKGemm(b *testing.B) {
	const nb = 16
	r := rand.New(rand.NewPCG(5, 6))
	stride := nb * Q4_KBlockSize
	w := make([]byte, QGemmRows*stride)
	for i := range QGemmRows {
		copy(w[i*stride:], randKW(r, nb, Q4_KBlockSize, 0))
	}
	ys := nb * Q8_KBlockSize
	y := make([]byte, QGemmCols*ys)
	for i := range QGemmCols {
		copy(y[i*ys:], randQ8K(r, nb))
	}
	panel := make([]byte, QGemmQ4_KPanelBytes(nb))
	out := make([]float32, QGemmCols*QGemmRows)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"pack", func() { _ = PackQ4_KPanel(panel, w, stride, QGemmRows, nb) }},
		{"tile", func() { _ = QGemmQ4_KTile(out, panel, y, ys, nb) }},
		{"mat", func() { _ = DotQ4_KMat(out, QGemmRows, w, stride, QGemmRows, y, ys, QGemmCols, nb) }},
	} {
		b.Run("q4_K/"+c.name, func(b *testing.B) {
			_ = PackQ4_KPanel(panel, w, stride, QGemmRows, nb)
			cpu0 := cpuSeconds()
			for b.Loop() {
				c.f()
			}
			if s := cpuSeconds() - cpu0; s > 0 {
				b.ReportMetric(s*1e9/float64(b.N), "cpu-ns/op")
				if c.name != "pack" {
					b.ReportMetric(2*QGemmRows*QGemmCols*nb*QKK*float64(b.N)/s/1e9, "cpu-GOPS")
				}
			}
		})
	}
}
