package vec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// qgemmCase packs weight rows of one type and activation rows into
// panels and groups and runs the tile, for comparison with the row dots.
type qgemmType struct {
	name string
	bs   int
	c    int
	rand func(*rand.Rand, int) ([]byte, []float64)
	pack func(dst, w []byte, stride, rows, nb int) error
	goPk func(dst, w []byte, stride, rows, nb int)
	dot  func(w, y []byte, nb int) float32
}

var qgemmTypes = []qgemmType{
	{"q8_0", Q8_0BlockSize, QGemmOffsetQ8_0, randQ8Row, PackQ8_0Panel, packQ8_0PanelGo, dotQ8_0Go},
	{"q4_0", Q4_0BlockSize, QGemmOffsetQ4_0, randQ4Row, PackQ4_0Panel, packQ4_0PanelGo, dotQ4_0Go},
}

// TestQGemmTile checks the tile (at the level in use) against the
// portable row dots: the integer block sums are exact, so only the order
// of float additions may differ (NMSE ≤ 1e-7), and the packed panels are
// byte for byte those of the portable packer.
func TestQGemmTile(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, ty := range qgemmTypes {
		for _, c := range []struct{ rows, cols, nb, pad int }{
			{16, 8, 1, 0}, {16, 8, 3, 5}, {5, 3, 64, 0}, {1, 1, 2, 34}, {16, 8, 128, 0}, {13, 7, 17, 3},
		} {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", ty.name, c.rows, c.cols, c.nb), func(t *testing.T) {
				stride := c.nb*ty.bs + c.pad
				w := make([]byte, (c.rows-1)*stride+c.nb*ty.bs)
				for i := range c.rows {
					row, _ := ty.rand(r, c.nb)
					copy(w[i*stride:], row)
				}
				// Quants of -128 (which ggml's quantizer never writes,
				// but a file may hold) are exact here.
				if ty.c == QGemmOffsetQ8_0 {
					w[2] = 0x80
				}
				ys := make([][]byte, c.cols)
				act := make([]byte, QGemmActBytes(c.nb))
				for i := range ys {
					ys[i], _ = randQ8Row(r, c.nb)
					if err := PackQGemmAct(act, i, ys[i], c.nb, ty.c); err != nil {
						t.Fatal(err)
					}
				}
				panel := make([]byte, QGemmPanelBytes(c.nb))
				for i := range panel {
					panel[i] = 0xa5 // the packer must write every byte
				}
				if err := ty.pack(panel, w, stride, c.rows, c.nb); err != nil {
					t.Fatal(err)
				}
				want := make([]byte, len(panel))
				ty.goPk(want, w, stride, c.rows, c.nb)
				if !bytes.Equal(panel, want) {
					t.Fatalf("packed panel differs from the portable packer's")
				}
				out := make([]float32, QGemmCols*QGemmRows)
				if err := QGemmTile(out, panel, act, c.nb); err != nil {
					t.Fatal(err)
				}
				ref := make([]float32, len(out))
				qgemmTileGo(ref, panel, act, c.nb)
				var num, den float64
				for col := range QGemmCols {
					for row := range QGemmRows {
						got := out[col*QGemmRows+row]
						var exp float32
						if col < c.cols && row < c.rows {
							exp = ty.dot(w[row*stride:], ys[col], c.nb)
						}
						if d := float64(ref[col*QGemmRows+row]) - float64(exp); d*d > 1e-7*(float64(exp)*float64(exp)+1e-12) {
							t.Errorf("portable tile [%d,%d] = %v, row dot %v", col, row, ref[col*QGemmRows+row], exp)
						}
						d := float64(got) - float64(exp)
						num += d * d
						den += float64(exp) * float64(exp)
					}
				}
				if num > 1e-7*den {
					t.Errorf("NMSE %g against the row dots (level %s)", num/den, Level())
				}
			})
		}
	}
}

func TestQGemmErrors(t *testing.T) {
	nb := 2
	w := make([]byte, 4*nb*Q8_0BlockSize)
	panel := make([]byte, QGemmPanelBytes(nb))
	act := make([]byte, QGemmActBytes(nb))
	y := make([]byte, nb*Q8_0BlockSize)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"too many rows", PackQ8_0Panel(panel, w, nb*Q8_0BlockSize, 17, nb)},
		{"rows past w", PackQ8_0Panel(panel, w, nb*Q8_0BlockSize, 5, nb)},
		{"short stride", PackQ4_0Panel(panel, w, 3, 2, nb)},
		{"short panel", PackQ8_0Panel(panel[:10], w, nb*Q8_0BlockSize, 2, nb)},
		{"huge stride", PackQ4_0Panel(panel, make([]byte, 1<<20), 1<<28, 1, nb)},
		{"col", PackQGemmAct(act, QGemmCols, y, nb, QGemmOffsetQ8_0)},
		{"offset", PackQGemmAct(act, 0, y, nb, 3)},
		{"short y", PackQGemmAct(act, 0, y[:5], nb, QGemmOffsetQ4_0)},
		{"tile", QGemmTile(make([]float32, 10), panel, act, nb)},
		{"tile blocks", QGemmTile(make([]float32, 128), panel, act, 0)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
}

func TestSumQ8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := make([]byte, QK)
	for range 100 {
		var want int32
		for i := range q {
			q[i] = byte(r.IntN(256))
			want += int32(int8(q[i]))
		}
		if got := sumQ8(q); got != want {
			t.Fatalf("sumQ8 = %d, want %d", got, want)
		}
	}
}

// BenchmarkQGemm runs the panel packer, the tile and, as the reference
// in the same run, the row dots on the same 16 weight rows × 8 activation
// rows of a 4096-wide block row (per second of CPU time: the figures hold
// on a shared machine).
func BenchmarkQGemm(b *testing.B) {
	const nb = 128
	r := rand.New(rand.NewPCG(3, 4))
	for _, ty := range qgemmTypes {
		stride := nb * ty.bs
		w := make([]byte, QGemmRows*stride)
		for i := range QGemmRows {
			row, _ := ty.rand(r, nb)
			copy(w[i*stride:], row)
		}
		panel := make([]byte, QGemmPanelBytes(nb))
		act := make([]byte, QGemmActBytes(nb))
		ys := make([][]byte, QGemmCols)
		for i := range ys {
			ys[i], _ = randQ8Row(r, nb)
			_ = PackQGemmAct(act, i, ys[i], nb, ty.c)
		}
		out := make([]float32, QGemmCols*QGemmRows)
		rows := DotQ8_0Rows
		if ty.c == QGemmOffsetQ4_0 {
			rows = DotQ4_0Rows
		}
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"pack", func() { _ = ty.pack(panel, w, stride, QGemmRows, nb) }},
			{"tile", func() { _ = QGemmTile(out, panel, act, nb) }},
			{"rowdots", func() {
				for i, y := range ys {
					_ = rows(out[i*QGemmRows:(i+1)*QGemmRows], w, stride, y, nb)
				}
			}},
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
						b.ReportMetric(2*QGemmRows*QGemmCols*nb*QK*float64(b.N)/s/1e9, "cpu-GOPS")
					}
				}
			})
		}
	}
}

// TestQuantizePackQGemmAct checks the fused quantizer and packer against
// the CPU quantizer followed by PackQGemmAct, byte for byte, on rows
// with zero blocks, tiny and huge values, NaN and infinities.
func TestQuantizePackQGemmAct(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const nb = 12
	x := make([]float32, nb*QK)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	for i := range QK {
		x[QK+i] = 0        // block 1: zeros
		x[2*QK+i] *= 1e-42 // block 2: subnormals (127/amax overflows)
		x[3*QK+i] *= 1e36  // block 3: huge
	}
	x[4*QK+5] = float32(math.NaN())
	x[5*QK+31] = float32(math.Inf(-1))
	x[6*QK] = float32(math.Inf(1))
	x[7*QK+3] = 0.5 // ties
	x[7*QK+4] = -2.5
	for _, c := range []int{QGemmOffsetQ4_0, QGemmOffsetQ8_0} {
		for _, col := range []int{0, 5, 7} {
			got := make([]byte, QGemmActBytes(nb))
			want := make([]byte, QGemmActBytes(nb))
			if err := QuantizePackQGemmAct(got, col, x, c); err != nil {
				t.Fatal(err)
			}
			y := make([]byte, nb*Q8_0BlockSize)
			if err := cpukernels.QuantizeRowQ8_0CPU(x, y); err != nil {
				t.Fatal(err)
			}
			if err := PackQGemmAct(want, col, y, nb, c); err != nil {
				t.Fatal(err)
			}
			for b := range nb {
				if g, w := got[b*qgActBlock:(b+1)*qgActBlock], want[b*qgActBlock:(b+1)*qgActBlock]; !bytes.Equal(g, w) {
					t.Errorf("offset %d, row %d, block %d: packed bytes differ (level %s)\n got %x\nwant %x", c, col, b, Level(), g, w)
				}
			}
		}
	}
	if err := QuantizePackQGemmAct(make([]byte, 10), 0, x, QGemmOffsetQ8_0); !errors.Is(err, ErrShape) {
		t.Errorf("short group: %v", err)
	}
	if err := QuantizePackQGemmAct(make([]byte, QGemmActBytes(1)), 0, x[:5], QGemmOffsetQ8_0); !errors.Is(err, ErrShape) {
		t.Errorf("partial block: %v", err)
	}
}

// TestQuantizeRowQ8_0 checks QuantizeRowQ8_0 against the CPU quantizer,
// byte for byte, on rows of 1 to 40 blocks with zero blocks, ties, tiny
// and huge values, NaN and infinities at the row's start, middle and end.
func TestQuantizeRowQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	randRow := func(nb int) []float32 {
		x := make([]float32, nb*QK)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 3)
		}
		return x
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		name string
		nb   int
		set  func(x []float32)
	}{
		{"one block", 1, func([]float32) {}},
		{"four blocks", 4, func([]float32) {}},
		{"forty blocks", 40, func([]float32) {}},
		{"zeros", 3, func(x []float32) { clear(x[QK : 2*QK]) }},
		{"ties", 2, func(x []float32) { // amax 127: id = 1, so k+0.5 is a tie
			for i := range QK {
				x[i] = float32(i%9-4) + 0.5
			}
			x[7] = 127
		}},
		{"subnormals", 3, func(x []float32) {
			for i := range QK {
				x[QK+i] *= 1e-42
			}
		}},
		{"huge", 3, func(x []float32) {
			for i := range QK {
				x[2*QK+i] *= 1e36
			}
		}},
		{"nan first", 5, func(x []float32) { x[3] = nan }},
		{"nan middle", 5, func(x []float32) { x[2*QK+31] = nan }},
		{"inf last", 5, func(x []float32) { x[4*QK] = -inf }},
		{"inf and nan", 6, func(x []float32) { x[QK+1], x[3*QK+2] = inf, nan }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := randRow(c.nb)
			c.set(x)
			got := make([]byte, c.nb*Q8_0BlockSize)
			want := make([]byte, len(got))
			if err := QuantizeRowQ8_0(x, got); err != nil {
				t.Fatal(err)
			}
			if err := cpukernels.QuantizeRowQ8_0CPU(x, want); err != nil {
				t.Fatal(err)
			}
			for b := range c.nb {
				if g, w := got[b*Q8_0BlockSize:(b+1)*Q8_0BlockSize], want[b*Q8_0BlockSize:(b+1)*Q8_0BlockSize]; !bytes.Equal(g, w) {
					t.Errorf("block %d differs (level %s)\n got %x\nwant %x", b, Level(), g, w)
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		n, d int
	}{{"partial block", QK + 5, 2 * Q8_0BlockSize}, {"short dst", 2 * QK, Q8_0BlockSize + 3}} {
		if err := QuantizeRowQ8_0(make([]float32, c.n), make([]byte, c.d)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// BenchmarkQuantizeRowQ8_0 quantizes one decode activation row (k =
// 4096) with QuantizeRowQ8_0 and the portable CPU quantizer.
func BenchmarkQuantizeRowQ8_0(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]byte, len(x)/QK*Q8_0BlockSize)
	for _, c := range []struct {
		name string
		f    func([]float32, []byte) error
	}{{"vec", QuantizeRowQ8_0}, {"portable", cpukernels.QuantizeRowQ8_0CPU}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				if err := c.f(x, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
