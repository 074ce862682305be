package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestDotQ5_0Q4_1Q5_1RowsShapes checks the q5_0, q4_1 and q5_1 row dots
// of the level in use against the portable ones over odd and even block
// counts and row counts around the four-row kernel (TestDotOtherTypes
// checks the values themselves).
func TestDotQ5_0Q4_1Q5_1RowsShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		wt, yt runtime.Type
		dot    func([]float32, []byte, int, []byte, int) error
		ref    func([]float32, []byte, int, []byte, int)
	}{
		{runtime.TypeQ5_0, runtime.TypeQ8_0, DotQ5_0Rows, dotQ5_0RowsGo},
		{runtime.TypeQ4_1, runtime.TypeQ8_1, DotQ4_1Rows, dotQ4_1RowsGo},
		{runtime.TypeQ5_1, runtime.TypeQ8_1, DotQ5_1Rows, dotQ5_1RowsGo},
	} {
		for _, nb := range []int{1, 2, 3, 7, 32} {
			for _, rows := range []int{1, 3, 4, 5, 9} {
				k := int64(nb * QK)
				rs := int(c.wt.RowSize(k))
				stride := rs + 3
				w := make([]byte, (rows-1)*stride+rs)
				x := make([]float32, k)
				for i := range rows {
					for j := range x {
						x[j] = float32(r.NormFloat64()) + 0.3
					}
					if err := cpukernels.FromFloat(c.wt, x, w[i*stride:i*stride+rs]); err != nil {
						t.Fatal(err)
					}
				}
				for j := range x {
					x[j] = float32(r.NormFloat64())
				}
				y := make([]byte, c.yt.RowSize(k))
				if err := cpukernels.FromFloatCPU(c.yt, x, y); err != nil {
					t.Fatal(err)
				}
				// mag[i] bounds the float sums' rounding: Σ|w|·|y| of row i.
				mag := make([]float64, rows)
				yv, wv := make([]float32, k), make([]float32, k)
				if err := cpukernels.ToFloat(c.yt, y, yv); err != nil {
					t.Fatal(err)
				}
				for i := range mag {
					if err := cpukernels.ToFloat(c.wt, w[i*stride:i*stride+rs], wv); err != nil {
						t.Fatal(err)
					}
					for j := range wv {
						mag[i] += math.Abs(float64(wv[j]) * float64(yv[j]))
					}
				}
				t.Run(fmt.Sprintf("%s/nb%d/rows%d", c.wt, nb, rows), func(t *testing.T) {
					got, want := make([]float32, rows+1), make([]float32, rows)
					got[rows] = 42
					if err := c.dot(got[:rows], w, stride, y, nb); err != nil {
						t.Fatal(err)
					}
					c.ref(want, w, stride, y, nb)
					if got[rows] != 42 {
						t.Fatal("wrote past dst")
					}
					for i := range want {
						if math.Abs(float64(got[i]-want[i])) > 1e-6*mag[i] {
							t.Errorf("row %d: %v, want %v", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestDotQ5_0Q4_1Q5_1RowsExact checks the integer sums of the q5_0, q4_1
// and q5_1 row dots of the level in use bit for bit against the portable
// ones: raw random blocks (every nibble and high-bit pattern, activation
// quants over [-127, 127]) with unit scales d = 1, so every float sum is an
// integer below 2^24 and exact on any accumulation order; m_w = 1 and
// s_y = 2 make the q8_1 term count too.
func TestDotQ5_0Q4_1Q5_1RowsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const one, two = 0x3c00, 0x4000 // 1.0 and 2.0 as IEEE halves
	for _, c := range []struct {
		name     string
		wbs, ybs int
		half     []int // offsets of the weight halves (d, m)
		dot      func([]float32, []byte, int, []byte, int) error
		ref      func([]float32, []byte, int, []byte, int)
	}{
		{"q5_0", Q5_0BlockSize, Q8_0BlockSize, []int{0}, DotQ5_0Rows, dotQ5_0RowsGo},
		{"q4_1", Q4_1BlockSize, Q8_1BlockSize, []int{0, 2}, DotQ4_1Rows, dotQ4_1RowsGo},
		{"q5_1", Q5_1BlockSize, Q8_1BlockSize, []int{0, 2}, DotQ5_1Rows, dotQ5_1RowsGo},
	} {
		for _, nb := range []int{1, 5, 16} {
			for _, rows := range []int{1, 4, 6} {
				t.Run(fmt.Sprintf("%s/nb%d/rows%d", c.name, nb, rows), func(t *testing.T) {
					stride := nb*c.wbs + 1
					w := make([]byte, rows*stride)
					for i := range w {
						w[i] = byte(r.Uint32())
					}
					y := make([]byte, nb*c.ybs)
					for b := range nb {
						blk := y[b*c.ybs : (b+1)*c.ybs]
						off := 2
						blk[0], blk[1] = one&0xff, one>>8
						if c.ybs == Q8_1BlockSize {
							blk[2], blk[3] = two&0xff, two>>8
							off = 4
						}
						for j := off; j < c.ybs; j++ {
							blk[j] = byte(int8(r.IntN(255) - 127))
						}
					}
					for i := range rows {
						for b := range nb {
							for _, h := range c.half {
								o := i*stride + b*c.wbs + h
								w[o], w[o+1] = one&0xff, one>>8
							}
						}
					}
					got, want := make([]float32, rows), make([]float32, rows)
					if err := c.dot(got, w, stride, y, nb); err != nil {
						t.Fatal(err)
					}
					c.ref(want, w, stride, y, nb)
					for i := range want {
						if got[i] != want[i] {
							t.Errorf("row %d: %v, want %v", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}
