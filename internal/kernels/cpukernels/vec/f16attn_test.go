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

// f16Rows returns rows f16 rows of n random halves stride bytes apart and
// their values.
func f16Rows(r *rand.Rand, rows, n, stride int) ([]byte, [][]float64) {
	b := make([]byte, (rows-1)*stride+2*n)
	vals := make([][]float64, rows)
	for i := range vals {
		vals[i] = make([]float64, n)
		for j := range n {
			h := cpukernels.F32ToF16(float32(r.NormFloat64()))
			binary.LittleEndian.PutUint16(b[i*stride+2*j:], h)
			vals[i][j] = float64(cpukernels.F16ToF32(h))
		}
	}
	return b, vals
}

// TestF16Group checks DotF16Group and MadF16Group (the build's kernels:
// AVX-512 group kernels where the level has them) against float64 loops,
// over head counts that mix the 4-, 2- and 1-head kernels, row counts
// around the four-row blocks and the tile, and lengths with tails of
// every width. Nothing past the operands is written.
func TestF16Group(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 15, 16, 40, 64, 80, 128, 129} {
		for _, rows := range []int{1, 3, 4, 5, 9, 67, 130} {
			for _, heads := range []int{1, 2, 3, 4, 5, 7, 8} {
				name := fmt.Sprintf("n%d/rows%d/heads%d", n, rows, heads)
				kstride := 2*n + 2*(rows%3)
				k, kv := f16Rows(r, rows, n, kstride)
				qstride, dstride := n+3, rows+1
				q := make([]float32, (heads-1)*qstride+n)
				for i := range q {
					q[i] = float32(r.NormFloat64())
				}
				dst := make([]float32, (heads-1)*dstride+rows+1)
				dst[len(dst)-1] = 42
				if err := DotF16Group(dst[:len(dst)-1], dstride, k, kstride, rows, q, qstride, heads, n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if dst[len(dst)-1] != 42 {
					t.Fatalf("%s: DotF16Group wrote past dst", name)
				}
				for h := range heads {
					for i := range rows {
						var want, mag float64
						for j := range n {
							p := kv[i][j] * float64(q[h*qstride+j])
							want += p
							mag += math.Abs(p)
						}
						if got := dst[h*dstride+i]; math.Abs(float64(got)-want) > 1e-6*mag {
							t.Fatalf("%s: dot head %d row %d: %v, want %v", name, h, i, got, want)
						}
					}
				}

				v, vv := k, kv
				wstride, ostride := rows+2, n+5
				w := make([]float32, (heads-1)*wstride+rows)
				for i := range w {
					w[i] = float32(r.Float64())
				}
				o := make([]float32, (heads-1)*ostride+n+1)
				for i := range o {
					o[i] = float32(i % 5)
				}
				if err := MadF16Group(o[:len(o)-1], ostride, v, kstride, rows, w, wstride, heads, n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if o[len(o)-1] != float32((len(o)-1)%5) {
					t.Fatalf("%s: MadF16Group wrote past o", name)
				}
				for h := range heads {
					for j := range n {
						want, mag := float64((h*ostride+j)%5), float64((h*ostride+j)%5)
						for i := range rows {
							p := float64(w[h*wstride+i]) * vv[i][j]
							want += p
							mag += math.Abs(p)
						}
						if got := o[h*ostride+j]; math.Abs(float64(got)-want) > 1e-6*mag {
							t.Fatalf("%s: mad head %d column %d: %v, want %v", name, h, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestF16GroupPortable checks the portable loops the other levels use
// against the build's kernels (agreeing to float32 rounding).
func TestF16GroupPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, rows, heads = 80, 13, 3
	k, _ := f16Rows(r, rows, n, 2*n)
	q := make([]float32, heads*n)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	a, b := make([]float32, heads*rows), make([]float32, heads*rows)
	dotF16GroupGo(a, rows, k, 2*n, rows, q, n, heads, n)
	if err := DotF16Group(b, rows, k, 2*n, rows, q, n, heads, n); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4*(1+math.Abs(float64(a[i]))) {
			t.Fatalf("dot %d: portable %v, build %v", i, a[i], b[i])
		}
	}
	oa, ob := make([]float32, heads*n), make([]float32, heads*n)
	madF16Go(oa, n, k, 2*n, rows, q, n, heads, 0, n)
	if err := MadF16Group(ob, n, k, 2*n, rows, q, n, heads, n); err != nil {
		t.Fatal(err)
	}
	for i := range oa {
		if math.Abs(float64(oa[i]-ob[i])) > 1e-4*(1+math.Abs(float64(oa[i]))) {
			t.Fatalf("mad %d: portable %v, build %v", i, oa[i], ob[i])
		}
	}
}

// TestF16GroupErrors: operands too short or strides too small are
// ErrShape, before anything is read or written.
func TestF16GroupErrors(t *testing.T) {
	k := make([]byte, 4*32)
	f := make([]float32, 64)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"dot zero n", DotF16Group(f, 4, k, 32, 4, f, 16, 1, 0)},
		{"dot short k", DotF16Group(f, 4, k, 32, 5, f, 16, 1, 16)},
		{"dot k stride", DotF16Group(f, 4, k, 30, 4, f, 16, 1, 16)},
		{"dot short dst", DotF16Group(f[:7], 4, k, 32, 4, f, 16, 2, 16)},
		{"dot short q", DotF16Group(f, 4, k, 32, 4, f[:31], 16, 2, 16)},
		{"dot q stride", DotF16Group(f, 4, k, 32, 4, f, 15, 2, 16)},
		{"mad short o", MadF16Group(f[:31], 16, k, 32, 4, f, 4, 2, 16)},
		{"mad short w", MadF16Group(f, 16, k, 32, 4, f[:7], 4, 2, 16)},
		{"mad short v", MadF16Group(f, 16, k[:100], 32, 4, f, 4, 2, 16)},
		{"mad huge stride", MadF16Group(f, 16, k, math.MaxInt, 2, f, 4, 2, 16)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: got %v, want ErrShape", c.name, c.err)
		}
	}
}

// TestScaleMaskMax checks the masked scores and their maximum against a
// scalar loop, with and without a mask, over lengths with tails.
func TestScaleMaskMax(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 8, 9, 31, 100} {
		x, mask := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if r.IntN(4) == 0 {
				mask[i] = float32(math.Inf(-1))
			}
		}
		for _, m := range [][]float32{nil, mask} {
			dst := make([]float32, n)
			got := ScaleMaskMax(dst, x, m, 0.5, 2)
			want := float32(math.Inf(-1))
			for i := range x {
				w := 0.5 * x[i]
				if m != nil {
					w += 2 * m[i]
				}
				if math.Abs(float64(dst[i]-w)) > 1e-6 && !(math.IsInf(float64(w), -1) && dst[i] == w) {
					t.Fatalf("n %d: dst[%d] = %v, want %v", n, i, dst[i], w)
				}
				want = max(want, w)
			}
			if got != want {
				t.Fatalf("n %d mask %v: max %v, want %v", n, m != nil, got, want)
			}
		}
	}
	if m := ScaleMaskMax(nil, nil, nil, 1, 1); !math.IsInf(float64(m), -1) {
		t.Fatalf("empty: %v", m)
	}
}
