package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGEMV runs the row dots of one activation row against a k×k
// weight matrix (k = 4096, the decode shape of docs/performance.md) and,
// as the reference of the same run, a float32 sum over as many bytes
// (read bandwidth). Compare GB/s across sub-benchmarks.
func BenchmarkGEMV(b *testing.B) {
	const k = 4096
	r := rand.New(rand.NewPCG(3, 4))
	nb := k / QK
	y, _ := randQ8Row(r, nb)
	dst := make([]float32, k)
	for _, c := range []struct {
		name string
		bs   int
		rand func(*rand.Rand, int) ([]byte, []float64)
		dot  func(dst []float32, w []byte, stride int, y []byte, nb int) error
	}{
		{"q8_0", Q8_0BlockSize, randQ8Row, DotQ8_0Rows},
		{"q4_0", Q4_0BlockSize, randQ4Row, DotQ4_0Rows},
	} {
		w := make([]byte, 0, k*nb*c.bs)
		for range k {
			row, _ := c.rand(r, nb)
			w = append(w, row...)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				if err := c.dot(dst, w, nb*c.bs, y, nb); err != nil {
					b.Fatal(err)
				}
			}
		})
		f := make([]float32, len(w)/4)
		b.Run(fmt.Sprintf("read-%s", c.name), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				_ = Sum64(f)
			}
		})
	}
}
