package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestDotQ5_0RowsShapes checks the q5_0 row dots of the level in use
// against the portable ones over odd and even block counts and row counts
// around the four-row kernel (TestDotOtherTypes checks the values).
func TestDotQ5_0RowsShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, nb := range []int{1, 2, 3, 7, 32} {
		for _, rows := range []int{1, 3, 4, 5, 9} {
			k := nb * QK
			stride := nb*Q5_0BlockSize + 3
			w := make([]byte, (rows-1)*stride+nb*Q5_0BlockSize)
			x := make([]float32, k)
			for i := range rows {
				for j := range x {
					x[j] = float32(r.NormFloat64())
				}
				if err := cpukernels.FromFloat(runtime.TypeQ5_0, x, w[i*stride:i*stride+nb*Q5_0BlockSize]); err != nil {
					t.Fatal(err)
				}
			}
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			y := make([]byte, nb*Q8_0BlockSize)
			if err := cpukernels.FromFloatCPU(runtime.TypeQ8_0, x, y); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("nb%d/rows%d", nb, rows), func(t *testing.T) {
				got, want := make([]float32, rows+1), make([]float32, rows)
				got[rows] = 42
				if err := DotQ5_0Rows(got[:rows], w, stride, y, nb); err != nil {
					t.Fatal(err)
				}
				dotQ5_0RowsGo(want, w, stride, y, nb)
				if got[rows] != 42 {
					t.Fatal("wrote past dst")
				}
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
						t.Errorf("row %d: %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}
