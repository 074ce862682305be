package vec

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestQuantizeRowQ8_KMatchesGo checks QuantizeRowQ8_K, at the SIMD level
// in use, byte for byte against cpukernels.QuantizeRowQ8_K: random rows,
// halves of quanta (ties), a zero block, the largest magnitude with both
// signs (the first wins), NaN and infinities, and bad lengths.
func TestQuantizeRowQ8_KMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const nb = 6
	for rep := 0; rep < 50; rep++ {
		x := make([]float32, nb*QKK)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
		b := x[QKK : 2*QKK] // exact ties: multiples of m/254
		for i := range b {
			b[i] = float32(r.IntN(509)-254) / 254 * 3
		}
		b[r.IntN(QKK)] = 3
		b[r.IntN(QKK)] = -3
		clear(x[2*QKK : 3*QKK])
		x[3*QKK+r.IntN(QKK)] = float32(math.NaN())
		x[4*QKK+r.IntN(QKK)] = float32(math.Inf(1 - 2*r.IntN(2)))
		got, want := make([]byte, nb*Q8_KBlockSize), make([]byte, nb*Q8_KBlockSize)
		for i := range got {
			got[i], want[i] = 0x5a, 0x5a
		}
		if err := QuantizeRowQ8_K(x, got); err != nil {
			t.Fatal(err)
		}
		if err := cpukernels.QuantizeRowQ8_K(x, want); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < nb; i++ {
			if g, w := got[i*Q8_KBlockSize:(i+1)*Q8_KBlockSize], want[i*Q8_KBlockSize:(i+1)*Q8_KBlockSize]; !bytes.Equal(g, w) {
				t.Fatalf("rep %d block %d: bytes differ", rep, i)
			}
		}
	}
	if err := QuantizeRowQ8_K(make([]float32, QKK+1), make([]byte, 2*Q8_KBlockSize)); !errors.Is(err, runtime.ErrShape) {
		t.Errorf("bad length: %v", err)
	}
	if err := QuantizeRowQ8_K(make([]float32, QKK), make([]byte, Q8_KBlockSize-1)); !errors.Is(err, runtime.ErrShape) {
		t.Errorf("short destination: %v", err)
	}
}
