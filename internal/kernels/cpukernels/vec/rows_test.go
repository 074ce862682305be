package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func softMaxRef(x []float32, scale float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(scale)*float64(v))
	}
	out := make([]float64, len(x))
	var s float64
	for i, v := range x {
		out[i] = math.Exp(float64(scale)*float64(v) - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func rmsNormRef(x []float32, eps float32) []float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) * r
	}
	return out
}

func TestRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	type shape struct{ cols, rows int }
	shapes := []shape{{1, 3}, {3, 2}, {8, 1}, {67, 3}, {4096, 2}, {1024, 300}, {5, 0}}
	for _, sh := range shapes {
		for _, scale := range []float32{1, 0.125, -2} {
			for _, inPlace := range []bool{false, true} {
				name := fmt.Sprintf("%dx%d/scale%v/inplace=%v", sh.cols, sh.rows, scale, inPlace)
				t.Run(name, func(t *testing.T) {
					n := sh.cols * sh.rows
					src := randSlice(r, n, 1, -6, 6)
					x := src[1 : 1+n]
					if n > 3 {
						x[2] = float32(math.Inf(-1)) // a masked element
					}
					orig := append([]float32(nil), x...)
					for _, kind := range []string{"softmax", "rmsnorm"} {
						copy(x, orig)
						dbuf := randSlice(r, n, 3, 0, 1)
						d, doff := dbuf[3:3+n], 3
						if inPlace {
							d, dbuf, doff = x, src, 1
						}
						if kind == "softmax" {
							SoftMaxRows(d, x, sh.cols, scale)
						} else {
							RMSNormRows(d, x, sh.cols, 1e-5)
						}
						checkGuards(t, dbuf, doff, n)
						for row := 0; row < sh.rows; row++ {
							in := orig[row*sh.cols : (row+1)*sh.cols]
							var want []float64
							if kind == "softmax" {
								want = softMaxRef(in, scale)
							} else {
								want = rmsNormRef(in, 1e-5)
							}
							// exp's argument is rounded to float32: its ulp
							// (relative 6e-8 of up to |scale|·12) bounds the
							// result's relative error.
							tol := 1e-6 * math.Max(1, math.Abs(float64(scale))*12/8)
							for j, w := range want {
								got := float64(d[row*sh.cols+j])
								if !closeRel(got, w, tol, 1e-30) && !(math.IsNaN(w) && math.IsNaN(got)) {
									t.Fatalf("%s row %d col %d: got %v want %v", kind, row, j, got, w)
								}
							}
						}
					}
				})
			}
		}
	}
}

func TestSoftMaxRow(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ninf := float32(math.Inf(-1))
	lengths := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 67, 4096}
	for _, n := range lengths {
		for _, withMask := range []bool{false, true} {
			for _, alias := range []string{"none", "dst=x", "dst=mask"} {
				if alias == "dst=mask" && !withMask {
					continue
				}
				for _, sc := range []struct{ scale, slope float32 }{{1, 1}, {0.125, 0.5}, {-2, 1}} {
					name := fmt.Sprintf("n%d/mask=%v/%s/scale%v", n, withMask, alias, sc.scale)
					t.Run(name, func(t *testing.T) {
						off := n % 4
						xb := randSlice(r, n, off, -6, 6)
						x := xb[off : off+n]
						var mb, mask []float32
						if withMask {
							mb = randSlice(r, n, 3-off, -2, 0)
							mask = mb[3-off : 3-off+n]
							for i := 1; i < n; i += 3 {
								mask[i] = ninf
							}
						}
						want := make([]float64, n)
						mx := math.Inf(-1)
						for i := range want {
							want[i] = float64(sc.scale) * float64(x[i])
							if withMask {
								want[i] += float64(sc.slope) * float64(mask[i])
							}
							mx = math.Max(mx, want[i])
						}
						var sum float64
						for i := range want {
							want[i] = math.Exp(want[i] - mx)
							sum += want[i]
						}
						db := randSlice(r, n, 2, 0, 1)
						d, dbuf, doff := db[2:2+n], db, 2
						switch alias {
						case "dst=x":
							d, dbuf, doff = x, xb, off
						case "dst=mask":
							d, dbuf, doff = mask, mb, 3-off
						}
						SoftMaxRow(d, x, mask, sc.scale, sc.slope)
						checkGuards(t, dbuf, doff, n)
						tol := 1e-6 * math.Max(1, math.Abs(float64(sc.scale))*12/8)
						for i := range want {
							if w := want[i] / sum; !closeRel(float64(d[i]), w, tol, 1e-30) {
								t.Fatalf("d[%d] = %v, want %v", i, d[i], w)
							}
						}
					})
				}
			}
		}
	}
}
