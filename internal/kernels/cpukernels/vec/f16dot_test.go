package vec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// halfTypes are the 16-bit weight types of the row dots: name, the
// build's and the portable kernel, rounding to the type and widening.
var halfTypes = []struct {
	name            string
	build, portable func([]float32, []byte, int, []float32, int)
	round           func(float32) uint16
	widen           func(uint16) float32
}{
	{"f16", dotF16Rows, dotF16RowsGo, cpukernels.F32ToF16, cpukernels.F16ToF32},
	{"bf16", dotBF16Rows, dotBF16RowsGo, cpukernels.F32ToBF16, cpukernels.BF16ToF32},
}

// TestDotF16Rows checks the f16 and bf16 row dots (the build's kernels
// and the portable one) against a float64 loop, over lengths that
// exercise every vector width's tail and row counts around the four-row
// kernel and the one-row streaming of long calls (f16StreamRows).
func TestDotF16Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, ht := range halfTypes {
		funcs := map[string]func([]float32, []byte, int, []float32, int){"build": ht.build, "go": ht.portable}
		for _, k := range []int{1, 7, 16, 31, 32, 33, 64, 100, 4096} {
			for _, rows := range []int{1, 3, 4, 5, 9, 66} {
				for _, pad := range []int{0, 6} {
					stride := 2*k + pad
					w := make([]byte, (rows-1)*stride+2*k)
					wv := make([][]float64, rows)
					for i := range wv {
						wv[i] = make([]float64, k)
						for j := range k {
							h := ht.round(float32(r.NormFloat64()))
							binary.LittleEndian.PutUint16(w[i*stride+2*j:], h)
							wv[i][j] = float64(ht.widen(h))
						}
					}
					x := make([]float32, k)
					for j := range x {
						x[j] = ht.widen(ht.round(float32(r.NormFloat64())))
					}
					for name, f := range funcs {
						t.Run(fmt.Sprintf("%s/%s/k%d/rows%d/pad%d", ht.name, name, k, rows, pad), func(t *testing.T) {
							dst := make([]float32, rows+1)
							dst[rows] = 42
							f(dst[:rows], w, stride, x, k)
							if dst[rows] != 42 {
								t.Fatal("wrote past dst")
							}
							for i := range rows {
								var want, mag float64
								for j, v := range x {
									want += wv[i][j] * float64(v)
									mag += math.Abs(wv[i][j] * float64(v))
								}
								if math.Abs(float64(dst[i])-want) > 1e-6*mag {
									t.Errorf("row %d: %v, want %v (magnitude %v)", i, dst[i], want, mag)
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestDotF16RowsStreamBits checks that a long call (rows one at a time at
// AVX-512) gives the bits of the same rows in short calls (four at a
// time): every row's sums run in the same order either way.
func TestDotF16RowsStreamBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, ht := range halfTypes {
		for _, k := range []int{64, 100, 2048} {
			halfStreamBits(t, r, ht.name, ht.build, ht.round, ht.widen, k)
		}
	}
}

func halfStreamBits(t *testing.T, r *rand.Rand, typ string, dot func([]float32, []byte, int, []float32, int), round func(float32) uint16, widen func(uint16) float32, k int) {
	t.Helper()
	rows := f16StreamRows + 5
	w := make([]byte, rows*2*k)
	for i := 0; i < len(w); i += 2 {
		binary.LittleEndian.PutUint16(w[i:], round(float32(r.NormFloat64())))
	}
	x := make([]float32, k)
	for j := range x {
		x[j] = widen(round(float32(r.NormFloat64())))
	}
	long, short := make([]float32, rows), make([]float32, rows)
	dot(long, w, 2*k, x, k)
	for r0 := 0; r0 < rows; r0 += 8 {
		r1 := min(r0+8, rows)
		dot(short[r0:r1], w[r0*2*k:], 2*k, x, k)
	}
	for i := range rows {
		if math.Float32bits(long[i]) != math.Float32bits(short[i]) {
			t.Fatalf("%s k %d row %d: %v in one call, %v in calls of 8 rows", typ, k, i, long[i], short[i])
		}
	}
}

func TestDotF16RowsErrors(t *testing.T) {
	dst := make([]float32, 2)
	w := make([]byte, 2*2*8)
	x := make([]float32, 8)
	for name, dot := range map[string]func([]float32, []byte, int, []float32, int) error{"f16": DotF16Rows, "bf16": DotBF16Rows} {
		for _, c := range []struct {
			name      string
			w         []byte
			x         []float32
			stride, k int
		}{
			{"short w", w[:len(w)-1], x, 16, 8},
			{"short x", w, x[:7], 16, 8},
			{"stride below row", w, x, 15, 8},
			{"no elements", w, x, 16, 0},
		} {
			if err := dot(dst, c.w, c.stride, c.x, c.k); !errors.Is(err, ErrShape) {
				t.Errorf("%s %s: err %v, want ErrShape", name, c.name, err)
			}
		}
		if err := dot(dst, w, 16, x, 8); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := dot(nil, nil, 0, nil, 0); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
