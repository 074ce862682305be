package vec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// qkGemmType is one k-quant weight type of the GEMM tile, with its
// portable forms and row dot.
type qkGemmType struct {
	name       string
	bs, d0     int
	panelBytes func(int) int
	pack       func(dst, w []byte, stride, rows, nb int) error
	packGo     func(dst, w []byte, stride, rows, nb int)
	tile       func(out []float32, p, y []byte, ys, nb int) error
	tileGo     func(out []float32, p, y []byte, ys, nb int)
	dot        func(w, y []byte, nb int) float32
}

var qkGemmTypes = []qkGemmType{
	{"q4_K", Q4_KBlockSize, 0, QGemmQ4_KPanelBytes, PackQ4_KPanel, packQ4_KPanelGo, QGemmQ4_KTile, qkTileQ4_KGo, dotQ4_K},
	{"q5_K", Q5_KBlockSize, 0, QGemmQ5_KPanelBytes, PackQ5_KPanel, packQ5_KPanelGo, QGemmQ5_KTile, qkTileQ4_KGo, dotQ5_K},
	{"q6_K", Q6_KBlockSize, 208, QGemmQ6_KPanelBytes, PackQ6_KPanel, packQ6_KPanelGo, QGemmQ6_KTile, qkTileQ6_KGo, dotQ6_K},
}

// TestQKGemmTile checks the k-quant tiles (at the level in use) and their
// portable forms bit for bit against the portable row dots, on full and
// partial panels with padded strides, and the packed panels byte for byte
// against the portable packers'.
func TestQKGemmTile(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, ty := range qkGemmTypes {
		for _, c := range []struct{ rows, nb, pad, ypad int }{
			{16, 1, 0, 0}, {16, 3, 7, 5}, {5, 2, 0, 1}, {1, 1, 3, 0}, {16, 16, 0, 0}, {13, 9, 1, 3},
		} {
			t.Run(fmt.Sprintf("%s/%dx%d", ty.name, c.rows, c.nb), func(t *testing.T) {
				testQKGemmTile(t, r, ty, c.rows, c.nb, c.pad, c.ypad)
			})
		}
	}
}

func testQKGemmTile(t *testing.T, r *rand.Rand, ty qkGemmType, rows, nb, pad, ypad int) {
	stride := nb*ty.bs + pad
	w := make([]byte, (rows-1)*stride+nb*ty.bs)
	for i := range rows {
		copy(w[i*stride:], randKW(r, nb, ty.bs, ty.d0))
	}
	ys := nb*Q8_KBlockSize + ypad
	y := make([]byte, (QGemmCols-1)*ys+nb*Q8_KBlockSize)
	for i := range QGemmCols {
		copy(y[i*ys:], randQ8K(r, nb))
	}
	panel := make([]byte, ty.panelBytes(nb))
	for i := range panel {
		panel[i] = 0xa5 // the packer must write every byte
	}
	if err := ty.pack(panel, w, stride, rows, nb); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, len(panel))
	ty.packGo(want, w, stride, rows, nb)
	if !bytes.Equal(panel, want) {
		for i := range panel {
			if panel[i] != want[i] {
				t.Fatalf("packed panel differs from the portable packer's at byte %d (block %d, offset %d): %#x, want %#x", i, i/(len(panel)/nb), i%(len(panel)/nb), panel[i], want[i])
			}
		}
	}
	out := make([]float32, QGemmCols*QGemmRows)
	if err := ty.tile(out, panel, y, ys, nb); err != nil {
		t.Fatal(err)
	}
	ref := make([]float32, len(out))
	ty.tileGo(ref, panel, y, ys, nb)
	for col := range QGemmCols {
		for row := range QGemmRows {
			var want float32
			if row < rows {
				want = ty.dot(w[row*stride:], y[col*ys:], nb)
			}
			g, p := out[col*QGemmRows+row], ref[col*QGemmRows+row]
			if math.Float32bits(g) != math.Float32bits(want) || math.Float32bits(p) != math.Float32bits(want) {
				t.Fatalf("[%d,%d] = %v (portable tile %v), want %v", col, row, g, p, want)
			}
		}
	}
}

// TestQKGemmErrors checks that bad shapes are errors, not faults.
func TestQKGemmErrors(t *testing.T) {
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
		{"short q6_K panel", PackQ6_KPanel(make([]byte, QGemmQ6_KPanelBytes(nb)-1), make([]byte, QGemmRows*nb*Q6_KBlockSize), nb*Q6_KBlockSize, QGemmRows, nb)},
		{"short q6_K weights", PackQ6_KPanel(make([]byte, QGemmQ6_KPanelBytes(nb)), w, nb*Q6_KBlockSize, QGemmRows, nb)},
		{"short q6_K tile panel", QGemmQ6_KTile(out, panel, y, ys, nb)},
		{"short q6_K activations", QGemmQ6_KTile(out, make([]byte, QGemmQ6_KPanelBytes(nb)), y[:len(y)-1], ys, nb)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
}

// BenchmarkQKGemm compares, for one 16-row panel of k-quant weights at
// k = 4096 and 8 q8_K activation rows, the panel's packing, the tile, and
// the row tiles (DotQ*_KMat) on the same 16×8 products (CPU time: the
// machine is shared).
func BenchmarkQKGemm(b *testing.B) {
	const nb = 16
	r := rand.New(rand.NewPCG(5, 6))
	mats := map[string]func([]float32, int, []byte, int, int, []byte, int, int, int) error{"q4_K": DotQ4_KMat, "q5_K": DotQ5_KMat, "q6_K": DotQ6_KMat}
	for _, ty := range qkGemmTypes {
		stride := nb * ty.bs
		w := make([]byte, QGemmRows*stride)
		for i := range QGemmRows {
			copy(w[i*stride:], randKW(r, nb, ty.bs, ty.d0))
		}
		ys := nb * Q8_KBlockSize
		y := make([]byte, QGemmCols*ys)
		for i := range QGemmCols {
			copy(y[i*ys:], randQ8K(r, nb))
		}
		panel := make([]byte, ty.panelBytes(nb))
		out := make([]float32, QGemmCols*QGemmRows)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"pack", func() { _ = ty.pack(panel, w, stride, QGemmRows, nb) }},
			{"tile", func() { _ = ty.tile(out, panel, y, ys, nb) }},
			{"mat", func() { _ = mats[ty.name](out, QGemmRows, w, stride, QGemmRows, y, ys, QGemmCols, nb) }},
		} {
			b.Run(ty.name+"/"+c.name, func(b *testing.B) {
				_ = ty.pack(panel, w, stride, QGemmRows, nb)
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
}
