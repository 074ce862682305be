package vec

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestDotOtherTypes checks each row dot against float64 sums over the
// dequantized weights and activations (quantized by ggml's CPU rules), for
// several rows at a stride with padding.
func TestDotOtherTypes(t *testing.T) {
	tests := []struct {
		wt, yt runtime.Type
		dot    func([]float32, []byte, int, []byte, int) error
	}{
		{runtime.TypeQ4_1, runtime.TypeQ8_1, DotQ4_1Rows},
		{runtime.TypeQ5_0, runtime.TypeQ8_0, DotQ5_0Rows},
		{runtime.TypeQ5_1, runtime.TypeQ8_1, DotQ5_1Rows},
		{runtime.TypeQ2_K, runtime.TypeQ8_K, DotQ2_KRows},
		{runtime.TypeQ3_K, runtime.TypeQ8_K, DotQ3_KRows},
		{runtime.TypeQ4_K, runtime.TypeQ8_K, DotQ4_KRows},
		{runtime.TypeQ5_K, runtime.TypeQ8_K, DotQ5_KRows},
		{runtime.TypeQ6_K, runtime.TypeQ8_K, DotQ6_KRows},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range tests {
		t.Run(tc.wt.String(), func(t *testing.T) {
			const k, rows = 768, 5
			nb := int(k / tc.wt.BlockSize())
			rs := int(tc.wt.RowSize(k))
			stride := rs + 7
			w := make([]byte, stride*rows)
			wv := make([][]float32, rows)
			for i := range wv {
				x := make([]float32, k)
				for j := range x {
					x[j] = float32(r.NormFloat64()) + 0.3
				}
				if err := cpukernels.FromFloat(tc.wt, x, w[i*stride:i*stride+rs]); err != nil {
					t.Fatal(err)
				}
				wv[i] = make([]float32, k)
				if err := cpukernels.ToFloat(tc.wt, w[i*stride:i*stride+rs], wv[i]); err != nil {
					t.Fatal(err)
				}
			}
			x := make([]float32, k)
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			y := make([]byte, tc.yt.RowSize(k))
			if err := cpukernels.FromFloatCPU(tc.yt, x, y); err != nil {
				t.Fatal(err)
			}
			yv := make([]float32, k)
			if err := cpukernels.ToFloat(tc.yt, y, yv); err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, rows)
			if err := tc.dot(dst, w, stride, y, nb); err != nil {
				t.Fatal(err)
			}
			for i := range dst {
				var want, mag float64
				for j := range yv {
					want += float64(wv[i][j]) * float64(yv[j])
					mag += math.Abs(float64(wv[i][j]) * float64(yv[j]))
				}
				if math.Abs(float64(dst[i])-want) > 1e-4*mag {
					t.Errorf("row %d: %g, want %g", i, dst[i], want)
				}
			}
			if err := tc.dot(dst, w[:len(w)-stride], stride, y, nb); !errors.Is(err, ErrShape) {
				t.Errorf("short weights: %v", err)
			}
			if err := tc.dot(dst, w, stride, y[:len(y)-1], nb); !errors.Is(err, ErrShape) {
				t.Errorf("short activations: %v", err)
			}
		})
	}
}
