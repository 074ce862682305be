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

func TestHalfToFloat(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := halfToFloat(uint16(h)), cpukernels.F16ToF32(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("half %#04x: %v, want %v", h, got, want)
		}
	}
}

// randQ8Row returns nb random q8_0 blocks (quants in [-127, 127]) and
// their values.
func randQ8Row(r *rand.Rand, nb int) ([]byte, []float64) {
	b := make([]byte, nb*Q8_0BlockSize)
	v := make([]float64, nb*QK)
	for i := 0; i < nb; i++ {
		blk := b[i*Q8_0BlockSize:]
		d := cpukernels.F32ToF16(float32(r.Float64()*0.1 + 1e-3))
		binary.LittleEndian.PutUint16(blk, d)
		for j := 0; j < QK; j++ {
			q := int8(r.IntN(255) - 127)
			blk[2+j] = byte(q)
			v[i*QK+j] = float64(cpukernels.F16ToF32(d)) * float64(q)
		}
	}
	return b, v
}

// randQ4Row returns nb random q4_0 blocks and their values.
func randQ4Row(r *rand.Rand, nb int) ([]byte, []float64) {
	b := make([]byte, nb*Q4_0BlockSize)
	v := make([]float64, nb*QK)
	for i := 0; i < nb; i++ {
		blk := b[i*Q4_0BlockSize:]
		d := cpukernels.F32ToF16(float32(r.Float64()*0.2 - 0.1))
		binary.LittleEndian.PutUint16(blk, d)
		for j := 0; j < QK/2; j++ {
			lo, hi := r.IntN(16), r.IntN(16)
			blk[2+j] = byte(lo | hi<<4)
			v[i*QK+j] = float64(cpukernels.F16ToF32(d)) * float64(lo-8)
			v[i*QK+j+QK/2] = float64(cpukernels.F16ToF32(d)) * float64(hi-8)
		}
	}
	return b, v
}

// TestDotQRows checks the quantized row dots (the build's kernels and the
// portable ones) against a float64 loop over the blocks' values.
func TestDotQRows(t *testing.T) {
	type rowsFunc func(dst []float32, w []byte, stride int, y []byte, nb int)
	kinds := []struct {
		name  string
		bs    int
		rand  func(*rand.Rand, int) ([]byte, []float64)
		funcs map[string]rowsFunc
	}{
		{"q8_0", Q8_0BlockSize, randQ8Row, map[string]rowsFunc{"build": dotQ8_0Rows, "go": dotQ8_0RowsGo}},
		{"q4_0", Q4_0BlockSize, randQ4Row, map[string]rowsFunc{"build": dotQ4_0Rows, "go": dotQ4_0RowsGo}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range kinds {
		for _, nb := range []int{1, 2, 3, 7, 32} {
			for _, rows := range []int{1, 3, 4, 5, 9} {
				for _, pad := range []int{0, 5} {
					stride := nb*k.bs + pad
					w := make([]byte, (rows-1)*stride+nb*k.bs)
					wv := make([][]float64, rows)
					for i := range wv {
						var blk []byte
						blk, wv[i] = k.rand(r, nb)
						copy(w[i*stride:], blk)
					}
					y, yv := randQ8Row(r, nb)
					for fname, f := range k.funcs {
						t.Run(fmt.Sprintf("%s/%s/nb%d/rows%d/pad%d", k.name, fname, nb, rows, pad), func(t *testing.T) {
							dst := make([]float32, rows+1)
							dst[rows] = 42
							f(dst[:rows], w, stride, y, nb)
							if dst[rows] != 42 {
								t.Fatalf("wrote past dst")
							}
							checkRowDots(t, dst[:rows], wv, yv)
						})
					}
				}
			}
		}
	}
}

// checkRowDots checks each dst[i] against the float64 dot of the values
// wv[i] and yv, within 1e-5 of the sum of the products' magnitudes.
func checkRowDots(t *testing.T, dst []float32, wv [][]float64, yv []float64) {
	t.Helper()
	for i := range dst {
		var want, mag float64
		for j := range yv {
			want += wv[i][j] * yv[j]
			mag += math.Abs(wv[i][j] * yv[j])
		}
		if math.Abs(float64(dst[i])-want) > 1e-5*mag+1e-30 {
			t.Errorf("row %d: %v, want %v (magnitude %v)", i, dst[i], want, mag)
		}
	}
}

func TestDotQRowsErrors(t *testing.T) {
	dst := make([]float32, 4)
	w := make([]byte, 4*Q8_0BlockSize)
	y := make([]byte, Q8_0BlockSize)
	cases := []struct {
		name   string
		dst    []float32
		w, y   []byte
		stride int
		nb     int
	}{
		{"short w", dst, w[:len(w)-1], y, Q8_0BlockSize, 1},
		{"short y", dst, w, y[:Q8_0BlockSize-1], Q8_0BlockSize, 1},
		{"stride below row", dst, w, y, Q8_0BlockSize - 1, 1},
		{"no blocks", dst, w, y, Q8_0BlockSize, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := DotQ8_0Rows(c.dst, c.w, c.stride, c.y, c.nb); !errors.Is(err, ErrShape) {
				t.Errorf("q8_0: err %v, want ErrShape", err)
			}
		})
	}
	if err := DotQ8_0Rows(dst, w, Q8_0BlockSize, y, 1); err != nil {
		t.Fatal(err)
	}
	if err := DotQ4_0Rows(dst, w, Q4_0BlockSize, y, 1); err != nil {
		t.Fatal(err)
	}
	if err := DotQ4_0Rows(dst, w[:4*Q4_0BlockSize-1], Q4_0BlockSize, y, 1); !errors.Is(err, ErrShape) {
		t.Errorf("q4_0: err %v, want ErrShape", err)
	}
}
