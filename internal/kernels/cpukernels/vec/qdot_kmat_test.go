package vec

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// randQ8K returns nb random q8_K blocks: any positive scale, quants in
// [-127, 127] (often at the ends) with consistent 16-quant sums.
func randQ8K(r *rand.Rand, nb int) []byte {
	y := make([]byte, nb*Q8_KBlockSize)
	for i := 0; i < nb; i++ {
		b := y[i*Q8_KBlockSize:]
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(r.Float64()*0.1)))
		for g := 0; g < 16; g++ {
			var s int32
			for l := 0; l < 16; l++ {
				q := int8(r.IntN(255) - 127)
				if r.IntN(8) == 0 {
					q = []int8{127, -127}[r.IntN(2)]
				}
				b[4+16*g+l] = byte(q)
				s += int32(q)
			}
			binary.LittleEndian.PutUint16(b[4+QKK+2*g:], uint16(int16(s)))
		}
	}
	return y
}

// randKW returns nb random k-quant super-blocks of bs bytes: arbitrary
// bytes (often 0xff: quants and scales at their extremes) with finite
// half scales at d0 and at the min scale's offset (q2_K, q4_K, q5_K).
func randKW(r *rand.Rand, nb, bs, d0 int) []byte {
	w := make([]byte, nb*bs)
	for i := range w {
		w[i] = byte(r.Uint32())
		if r.IntN(8) == 0 {
			w[i] = 0xff
		}
	}
	for i := 0; i < nb; i++ {
		binary.LittleEndian.PutUint16(w[i*bs+d0:], cpukernels.F32ToF16(float32(r.NormFloat64())))
		switch bs {
		case Q4_KBlockSize, Q5_KBlockSize:
			binary.LittleEndian.PutUint16(w[i*bs+2:], cpukernels.F32ToF16(float32(r.NormFloat64())))
		case Q2_KBlockSize:
			binary.LittleEndian.PutUint16(w[i*bs+82:], cpukernels.F32ToF16(float32(r.NormFloat64())))
		}
	}
	return w
}

// TestDotKMatMatchesGo checks DotQ*_KMat and DotQ*_KRows, at the SIMD level
// in use, bit for bit against the portable one-pair dots, on tiles of
// several shapes with padded strides.
func TestDotKMatMatchesGo(t *testing.T) {
	tests := []struct {
		name     string
		bs, d0   int
		mat      func([]float32, int, []byte, int, int, []byte, int, int, int) error
		rows     func([]float32, []byte, int, []byte, int) error
		portable func(w, y []byte, nb int) float32
	}{
		{"q2_K", Q2_KBlockSize, 80, DotQ2_KMat, DotQ2_KRows, dotQ2_K},
		{"q3_K", Q3_KBlockSize, 108, DotQ3_KMat, DotQ3_KRows, dotQ3_K},
		{"q4_K", Q4_KBlockSize, 0, DotQ4_KMat, DotQ4_KRows, dotQ4_K},
		{"q5_K", Q5_KBlockSize, 0, DotQ5_KMat, DotQ5_KRows, dotQ5_K},
		{"q6_K", Q6_KBlockSize, 208, DotQ6_KMat, DotQ6_KRows, dotQ6_K},
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for rep := 0; rep < 40; rep++ {
				nb, nw, ny := 1+r.IntN(5), 1+r.IntN(6), 1+r.IntN(10)
				stride, ys, ldd := nb*tc.bs+r.IntN(3), nb*Q8_KBlockSize+r.IntN(5), nw+r.IntN(3)
				w := randKW(r, nw*stride/tc.bs+1, tc.bs, tc.d0)[:(nw-1)*stride+nb*tc.bs]
				for i := 0; i < nw; i++ { // finite scales at the row's own offsets
					copy(w[i*stride:], randKW(r, nb, tc.bs, tc.d0))
				}
				y := make([]byte, (ny-1)*ys+nb*Q8_KBlockSize)
				for c := 0; c < ny; c++ {
					copy(y[c*ys:], randQ8K(r, nb))
				}
				dst := make([]float32, (ny-1)*ldd+nw)
				if err := tc.mat(dst, ldd, w, stride, nw, y, ys, ny, nb); err != nil {
					t.Fatal(err)
				}
				col := make([]float32, nw)
				for c := 0; c < ny; c++ {
					if err := tc.rows(col, w, stride, y[c*ys:], nb); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < nw; i++ {
						want := tc.portable(w[i*stride:], y[c*ys:], nb)
						if g := dst[c*ldd+i]; math.Float32bits(g) != math.Float32bits(want) {
							t.Fatalf("rep %d (nb %d, %d×%d): [%d,%d] = %v, want %v", rep, nb, ny, nw, c, i, g, want)
						}
						if math.Float32bits(col[i]) != math.Float32bits(want) {
							t.Fatalf("rep %d: rows [%d,%d] = %v, want %v", rep, c, i, col[i], want)
						}
					}
				}
				if err := tc.mat(dst, ldd, w[:len(w)-1], stride, nw, y, ys, ny, nb); !errors.Is(err, ErrShape) {
					t.Errorf("short weights: %v", err)
				}
				if err := tc.mat(dst, ldd, w, stride, nw, y[:len(y)-1], ys, ny, nb); !errors.Is(err, ErrShape) {
					t.Errorf("short activations: %v", err)
				}
				if err := tc.mat(dst[:len(dst)-1], ldd, w, stride, nw, y, ys, ny, nb); !errors.Is(err, ErrShape) {
					t.Errorf("short results: %v", err)
				}
			}
		})
	}
}
