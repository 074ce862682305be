package cpukernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// The tests of ref_conv.go compare each kernel, in one and in three parts,
// with a naive float64 reference written from ggml's definition of the op,
// on pseudo-random inputs (dense and permuted layouts, f32 and f16
// kernels).

// fillRand fills x's whole base with values in [-1, 1) and returns x's
// elements in row-major (logical) order, as stored (rounded for f16).
func fillRand(t *testing.T, m HostMem, x *runtime.Tensor, seed uint64) []float32 {
	t.Helper()
	base := x.Base()
	r := rand.New(rand.NewPCG(seed, 7))
	set(t, m, base, seq(int(base.Nelements()), func(int) float32 { return r.Float32()*2 - 1 }))
	v, err := m.F32(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// computeNth computes out (built in c with its inputs in m) in nth parts
// and returns its elements.
func computeNth(t *testing.T, c *runtime.Context, m HostMem, out *runtime.Tensor, nth int) []float32 {
	t.Helper()
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	for _, l := range g.Leafs() {
		m.Alloc(l)
	}
	for _, n := range g.Nodes() {
		m.Alloc(n)
		for i := 0; i < nth; i++ {
			if err := Compute(n, m.Mem, i, nth); err != nil {
				t.Fatal(err)
			}
		}
	}
	v, err := m.F32(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkNear fails t when got and want differ by more than tol relative to
// want's largest magnitude.
func checkNear(t *testing.T, got, want []float64, tol float64, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1.0
	for _, w := range want {
		scale = max(scale, abs64(w))
	}
	for i := range got {
		if d := abs64(got[i] - want[i]); d > tol*scale {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// convRef is a direct 3-d convolution (2-d with depth 1) of in {W, H, D,
// IC·N} with ker {KW, KH, KD, IC·OC}, both dense, into {OW, OH, OD, OC·N};
// round rounds the input to f16 first.
func convRef(in []float32, w, h, d, ic, n int, ker []float32, kw, kh, kd, oc int, s, p, dl [3]int, round bool) ([]float64, [3]int) {
	o := [3]int{
		int(convOutSize(int64(w), int64(kw), int64(s[0]), int64(p[0]), int64(dl[0]))),
		int(convOutSize(int64(h), int64(kh), int64(s[1]), int64(p[1]), int64(dl[1]))),
		int(convOutSize(int64(d), int64(kd), int64(s[2]), int64(p[2]), int64(dl[2]))),
	}
	out := make([]float64, o[0]*o[1]*o[2]*oc*n)
	for b := 0; b < n; b++ {
		for co := 0; co < oc; co++ {
			for z := 0; z < o[2]; z++ {
				for y := 0; y < o[1]; y++ {
					for x := 0; x < o[0]; x++ {
						var sum float64
						for ci := 0; ci < ic; ci++ {
							for kz := 0; kz < kd; kz++ {
								for ky := 0; ky < kh; ky++ {
									for kx := 0; kx < kw; kx++ {
										sx, sy, sz := x*s[0]+kx*dl[0]-p[0], y*s[1]+ky*dl[1]-p[1], z*s[2]+kz*dl[2]-p[2]
										if sx < 0 || sx >= w || sy < 0 || sy >= h || sz < 0 || sz >= d {
											continue
										}
										v := in[(((b*ic+ci)*d+sz)*h+sy)*w+sx]
										if round {
											v = halfRound(v)
										}
										sum += float64(v) * float64(ker[(((co*ic+ci)*kd+kz)*kh+ky)*kw+kx])
									}
								}
							}
						}
						out[(((b*oc+co)*o[2]+z)*o[1]+y)*o[0]+x] = sum
					}
				}
			}
		}
	}
	return out, o
}

func TestConv2DAndConv3D(t *testing.T) {
	type cfg struct {
		w, h, d, ic, n, kw, kh, kd, oc int
		s, p, dl                       [3]int
		f16, cwhn, is3D                bool
	}
	cases := []cfg{
		{w: 7, h: 5, d: 1, ic: 3, n: 2, kw: 3, kh: 2, kd: 1, oc: 4, s: [3]int{1, 1, 1}, p: [3]int{0, 0, 0}, dl: [3]int{1, 1, 1}},
		{w: 9, h: 8, d: 1, ic: 2, n: 1, kw: 3, kh: 3, kd: 1, oc: 5, s: [3]int{2, 3, 1}, p: [3]int{1, 2, 0}, dl: [3]int{2, 1, 1}, f16: true},
		{w: 6, h: 7, d: 1, ic: 4, n: 2, kw: 2, kh: 3, kd: 1, oc: 3, s: [3]int{1, 2, 1}, p: [3]int{2, 1, 0}, dl: [3]int{1, 2, 1}, cwhn: true},
		{w: 1, h: 1, d: 1, ic: 1, n: 2, kw: 1, kh: 1, kd: 1, oc: 1, s: [3]int{1, 5, 1}, p: [3]int{5, 2, 0}, dl: [3]int{2, 4, 1}, f16: true, cwhn: true},
		{w: 6, h: 5, d: 4, ic: 2, n: 2, kw: 3, kh: 2, kd: 2, oc: 3, s: [3]int{1, 2, 1}, p: [3]int{1, 0, 1}, dl: [3]int{1, 1, 2}, is3D: true},
		{w: 5, h: 5, d: 5, ic: 3, n: 1, kw: 5, kh: 1, kd: 3, oc: 2, s: [3]int{2, 1, 1}, p: [3]int{2, 0, 1}, dl: [3]int{1, 1, 2}, f16: true, is3D: true},
	}
	for i, cf := range cases {
		for _, nth := range []int{1, 3} {
			t.Run(fmt.Sprintf("case%d/nth%d", i, nth), func(t *testing.T) {
				c, m := runtime.NewContext(), HostMem{}
				kt := runtime.TypeF32
				if cf.f16 {
					kt = runtime.TypeF16
				}
				var in, ker *runtime.Tensor
				switch {
				case cf.is3D:
					in = c.NewTensor(runtime.TypeF32, int64(cf.w), int64(cf.h), int64(cf.d), int64(cf.ic*cf.n))
					ker = c.NewTensor(kt, int64(cf.kw), int64(cf.kh), int64(cf.kd), int64(cf.ic*cf.oc))
				case cf.cwhn: // channels densest, then permuted back to {W, H, C, N}
					in = c.Permute(c.NewTensor(runtime.TypeF32, int64(cf.ic), int64(cf.w), int64(cf.h), int64(cf.n)), 2, 0, 1, 3)
					ker = c.Permute(c.NewTensor(kt, int64(cf.ic), int64(cf.oc), int64(cf.kw), int64(cf.kh)), 2, 3, 0, 1)
				default:
					in = c.NewTensor(runtime.TypeF32, int64(cf.w), int64(cf.h), int64(cf.ic), int64(cf.n))
					ker = c.NewTensor(kt, int64(cf.kw), int64(cf.kh), int64(cf.ic), int64(cf.oc))
				}
				iv, kv := fillRand(t, m, in, 1), fillRand(t, m, ker, 2)
				var out *runtime.Tensor
				if cf.is3D {
					out = c.Conv3DDirect(ker, in, cf.s[0], cf.s[1], cf.s[2], cf.p[0], cf.p[1], cf.p[2], cf.dl[0], cf.dl[1], cf.dl[2], cf.ic, cf.n, cf.oc)
				} else {
					out = c.Conv2DDirect(ker, in, cf.s[0], cf.s[1], cf.p[0], cf.p[1], cf.dl[0], cf.dl[1])
				}
				got := computeNth(t, c, m, out, nth)
				want, _ := convRef(iv, cf.w, cf.h, cf.d, cf.ic, cf.n, kv, cf.kw, cf.kh, cf.kd, cf.oc, cf.s, cf.p, cf.dl, cf.f16)
				checkNear(t, f64s(got), want, 1e-5, out.Op.String())
			})
		}
	}
}

func TestConv2DDw(t *testing.T) {
	for i, cf := range []struct {
		w, h, ch, n, kw, kh, s, p, d int
		f16, cwhn                    bool
	}{
		{17, 9, 3, 1, 3, 3, 1, 0, 1, false, false},
		{8, 6, 4, 2, 3, 2, 2, 1, 1, true, false},
		{9, 7, 5, 1, 3, 3, 1, 2, 2, false, true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			kt := runtime.TypeF32
			if cf.f16 {
				kt = runtime.TypeF16
			}
			var in, ker *runtime.Tensor
			if cf.cwhn {
				in = c.Permute(c.NewTensor(runtime.TypeF32, int64(cf.ch), int64(cf.w), int64(cf.h), int64(cf.n)), 2, 0, 1, 3)
				ker = c.Permute(c.NewTensor(kt, 1, int64(cf.ch), int64(cf.kw), int64(cf.kh)), 2, 3, 0, 1)
			} else {
				in = c.NewTensor(runtime.TypeF32, int64(cf.w), int64(cf.h), int64(cf.ch), int64(cf.n))
				ker = c.NewTensor(kt, int64(cf.kw), int64(cf.kh), 1, int64(cf.ch))
			}
			iv, kv := fillRand(t, m, in, 3), fillRand(t, m, ker, 4)
			out := c.Conv2DDwDirect(ker, in, cf.s, cf.s, cf.p, cf.p, cf.d, cf.d)
			if cf.cwhn && out != nil && out.Nb[2] != out.Type.Size() {
				t.Fatalf("result of a channels-last input has strides %v", out.Nb)
			}
			got := computeNth(t, c, m, out, 2)
			// Depthwise: input channel ch·n with kernel channel ch, one
			// output channel per input channel (convRef with ic = oc = 1).
			var want []float64
			plane := cf.w * cf.h
			for b := 0; b < cf.n; b++ {
				for ch := 0; ch < cf.ch; ch++ {
					inPlane := iv[(b*cf.ch+ch)*plane : (b*cf.ch+ch+1)*plane]
					kPlane := kv[ch*cf.kw*cf.kh : (ch+1)*cf.kw*cf.kh]
					o, _ := convRef(inPlane, cf.w, cf.h, 1, 1, 1, kPlane, cf.kw, cf.kh, 1, 1,
						[3]int{cf.s, cf.s, 1}, [3]int{cf.p, cf.p, 0}, [3]int{cf.d, cf.d, 1}, false)
					want = append(want, o...)
				}
			}
			checkNear(t, f64s(got), want, 1e-5, "conv_2d_dw")
		})
	}
}

func TestConvTranspose(t *testing.T) {
	for i, cf := range []struct {
		w, h, ic, n, kw, kh, oc, s int
		f16, is2D                  bool
	}{
		{w: 13, ic: 7, kw: 3, oc: 9, s: 2},
		{w: 2, ic: 1, kw: 37, oc: 2, s: 3, f16: true},
		{w: 5, h: 4, ic: 3, n: 2, kw: 3, kh: 2, oc: 4, s: 2, is2D: true},
		{w: 3, h: 2, ic: 3, n: 1, kw: 2, kh: 2, oc: 1, s: 1, f16: true, is2D: true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			kt := runtime.TypeF32
			if cf.f16 {
				kt = runtime.TypeF16
			}
			h, kh, n := max(cf.h, 1), max(cf.kh, 1), max(cf.n, 1)
			var in, ker, out *runtime.Tensor
			if cf.is2D {
				in = c.NewTensor(runtime.TypeF32, int64(cf.w), int64(h), int64(cf.ic), int64(n))
				ker = c.NewTensor(kt, int64(cf.kw), int64(kh), int64(cf.oc), int64(cf.ic))
			} else {
				in = c.NewTensor(runtime.TypeF32, int64(cf.w), int64(cf.ic))
				ker = c.NewTensor(kt, int64(cf.kw), int64(cf.oc), int64(cf.ic))
			}
			iv, kv := fillRand(t, m, in, 5), fillRand(t, m, ker, 6)
			if cf.is2D {
				out = c.ConvTranspose2DP0(ker, in, cf.s)
			} else {
				out = c.ConvTranspose1D(ker, in, cf.s, 0, 1)
			}
			got := computeNth(t, c, m, out, 3)
			ow, oh := (cf.w-1)*cf.s+cf.kw, (h-1)*cf.s+kh
			want := make([]float64, ow*oh*cf.oc*n)
			for b := 0; b < n; b++ {
				for ci := 0; ci < cf.ic; ci++ {
					for y := 0; y < h; y++ {
						for x := 0; x < cf.w; x++ {
							v := iv[((b*cf.ic+ci)*h+y)*cf.w+x]
							if cf.f16 {
								v = halfRound(v)
							}
							for co := 0; co < cf.oc; co++ {
								for ky := 0; ky < kh; ky++ {
									for kx := 0; kx < cf.kw; kx++ {
										// kernel {KW, KH, OC, IC}; 1-d {K, OC, IC}
										kidx := ((ci*cf.oc+co)*kh+ky)*cf.kw + kx
										want[((b*cf.oc+co)*oh+y*cf.s+ky)*ow+x*cf.s+kx] += float64(v) * float64(kv[kidx])
									}
								}
							}
						}
					}
				}
			}
			checkNear(t, f64s(got), want, 1e-5, out.Op.String())
		})
	}
}

func TestIm2col3D(t *testing.T) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeF16} {
		for _, view := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/view=%v", typ, view), func(t *testing.T) {
				c, m := runtime.NewContext(), HostMem{}
				const w, h, d, ic, n, kw, kh, kd = 6, 5, 4, 2, 2, 3, 2, 2
				s, p, dl := [3]int{2, 1, 1}, [3]int{1, 0, 1}, [3]int{1, 2, 1}
				var in *runtime.Tensor
				if view {
					big := c.NewTensor(runtime.TypeF32, w+2, h+2, d+2, ic*n+2)
					in = c.View4D(big, w, h, d, ic*n, big.Nb[1], big.Nb[2], big.Nb[3], 0)
				} else {
					in = c.NewTensor(runtime.TypeF32, w, h, d, ic*n)
				}
				iv := fillRand(t, m, in, 8)
				out := c.Im2col3D(c.NewTensor(runtime.TypeF16, kw, kh, kd, ic*3), in, ic, s[0], s[1], s[2], p[0], p[1], p[2], dl[0], dl[1], dl[2], typ)
				got := computeNth(t, c, m, out, 3)
				ow, oh := int(out.Ne[1]), int(out.Ne[2])
				od := int(out.Ne[3]) / n
				var want []float64
				for b := 0; b < n; b++ {
					for z := 0; z < od; z++ {
						for y := 0; y < oh; y++ {
							for x := 0; x < ow; x++ {
								for ci := 0; ci < ic; ci++ {
									for kz := 0; kz < kd; kz++ {
										for ky := 0; ky < kh; ky++ {
											for kx := 0; kx < kw; kx++ {
												sx, sy, sz := x*s[0]+kx*dl[0]-p[0], y*s[1]+ky*dl[1]-p[1], z*s[2]+kz*dl[2]-p[2]
												v := 0.0
												if sx >= 0 && sx < w && sy >= 0 && sy < h && sz >= 0 && sz < d {
													x := iv[(((b*ic+ci)*d+sz)*h+sy)*w+sx]
													if typ == runtime.TypeF16 {
														x = halfRound(x)
													}
													v = float64(x)
												}
												want = append(want, v)
											}
										}
									}
								}
							}
						}
					}
				}
				checkNear(t, f64s(got), want, 0, "im2col_3d")
			})
		}
	}
}

// TestIm2colBack checks that IM2COL_BACK is IM2COL's adjoint:
// ⟨im2col(x), g⟩ = ⟨x, im2col_back(g)⟩.
func TestIm2colBack(t *testing.T) {
	for _, is2D := range []bool{false, true} {
		t.Run(fmt.Sprint("2d=", is2D), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			var x, ker *runtime.Tensor
			if is2D {
				x, ker = c.NewTensor(runtime.TypeF32, 7, 6, 2, 2), c.NewTensor(runtime.TypeF32, 3, 2, 2, 1)
			} else {
				x, ker = c.NewTensor(runtime.TypeF32, 9, 3, 2), c.NewTensor(runtime.TypeF32, 3, 3, 1)
			}
			xv := fillRand(t, m, x, 9)
			s1, p1, d1 := 1, 1, 2
			if !is2D { // ggml's 1-d callers pass 0 (IM2COL applies p1 even in 1-d)
				s1, p1, d1 = 0, 0, 0
			}
			col := c.Im2col(ker, x, 2, s1, 1, p1, 2, d1, is2D, runtime.TypeF32)
			colv := computeNth(t, c, m, col, 1)
			g := c.NewTensorStrided(runtime.TypeF32, col.Ne, nil)
			gv := fillRand(t, m, g, 10)
			back := c.Im2colBack(g, ker, x.Ne, 2, s1, 1, p1, 2, d1, is2D)
			bv := computeNth(t, c, m, back, 3)
			var lhs, rhs float64
			for i := range colv {
				lhs += float64(colv[i]) * float64(gv[i])
			}
			for i := range xv {
				rhs += float64(xv[i]) * float64(bv[i])
			}
			checkNear(t, []float64{lhs}, []float64{rhs}, 1e-5, "adjoint")
		})
	}
}

func TestCol2im1D(t *testing.T) {
	for i, cf := range []struct {
		k, oc, tin, s, p int
		typ              runtime.Type
	}{
		{4, 3, 7, 2, 0, runtime.TypeF32},
		{6, 4, 11, 3, 1, runtime.TypeF16},
		{2, 3, 9, 3, 0, runtime.TypeBF16},
		{8, 4, 13, 4, 2, runtime.TypeF32},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			a := c.NewTensor(cf.typ, int64(cf.k*cf.oc), int64(cf.tin))
			av := fillRand(t, m, a, 11)
			out := c.Col2im1D(a, cf.s, cf.oc, cf.p)
			got := computeNth(t, c, m, out, 3)
			tout := (cf.tin-1)*cf.s + cf.k - 2*cf.p
			want := make([]float64, tout*cf.oc)
			for ti := 0; ti < cf.tin; ti++ {
				for o := 0; o < cf.oc; o++ {
					for j := 0; j < cf.k; j++ {
						if pos := ti*cf.s + j - cf.p; pos >= 0 && pos < tout {
							want[o*tout+pos] += float64(av[ti*cf.k*cf.oc+o*cf.k+j])
						}
					}
				}
			}
			if cf.typ != runtime.TypeF32 {
				for i, v := range want {
					v32 := float32(v)
					if cf.typ == runtime.TypeF16 {
						v32 = halfRound(v32)
					} else {
						v32 = BF16ToF32(F32ToBF16(v32))
					}
					want[i] = float64(v32)
				}
			}
			tol := 1e-6
			if cf.typ != runtime.TypeF32 {
				tol = 1e-2
			}
			checkNear(t, f64s(got), want, tol, "col2im_1d")
		})
	}
}

func TestPool1D(t *testing.T) {
	for _, op := range []int32{runtime.PoolAvg, runtime.PoolMax} {
		for _, kp := range [][3]int{{1, 1, 1}, {3, 2, 2}, {2, 3, 3}, {3, 3, 0}} {
			t.Run(fmt.Sprint(op, kp), func(t *testing.T) {
				c, m := runtime.NewContext(), HostMem{}
				a := c.NewTensor(runtime.TypeF32, 10, 3, 2)
				av := fillRand(t, m, a, 12)
				k, s, p := kp[0], kp[1], kp[2]
				out := c.Pool1D(a, op, k, s, p)
				got := computeNth(t, c, m, out, 2)
				ow := (10+2*p-k)/s + 1
				var want []float64
				for r := 0; r < 6; r++ {
					for o := 0; o < ow; o++ {
						acc, cnt := 0.0, 0
						if op == runtime.PoolMax {
							acc = -3.4028234663852886e38
						}
						for j := o*s - p; j < o*s-p+k; j++ {
							if j < 0 || j >= 10 {
								continue
							}
							v := float64(av[r*10+j])
							if op == runtime.PoolMax {
								acc = max(acc, v)
							} else {
								acc += v
							}
							cnt++
						}
						if op == runtime.PoolAvg {
							if cnt > 0 {
								acc /= float64(cnt)
							}
						}
						want = append(want, acc)
					}
				}
				checkNear(t, f64s(got), want, 1e-6, "pool_1d")
			})
		}
	}
}

func TestPool2DBack(t *testing.T) {
	for _, op := range []int32{runtime.PoolAvg, runtime.PoolMax} {
		t.Run(fmt.Sprint(op), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			const w, h, k0, k1, s0, s1, p0, p1 = 7, 6, 3, 2, 2, 1, 1, 1
			af := c.NewTensor(runtime.TypeF32, w, h, 2)
			afv := fillRand(t, m, af, 13)
			pw, ph := (w+2*p0-k0)/s0+1, (h+2*p1-k1)/s1+1
			g := c.NewTensor(runtime.TypeF32, int64(pw), int64(ph), 2)
			gv := fillRand(t, m, g, 14)
			out := c.Pool2DBack(g, af, op, k0, k1, s0, s1, p0, p1)
			got := computeNth(t, c, m, out, 3)
			want := make([]float64, w*h*2)
			for ch := 0; ch < 2; ch++ {
				for oy := 0; oy < ph; oy++ {
					for ox := 0; ox < pw; ox++ {
						gr := float64(gv[(ch*ph+oy)*pw+ox])
						bi, best := -1, -3.4028234663852886e38
						for ky := 0; ky < k1; ky++ {
							for kx := 0; kx < k0; kx++ {
								x, y := ox*s0-p0+kx, oy*s1-p1+ky
								if x < 0 || x >= w || y < 0 || y >= h {
									continue
								}
								i := (ch*h+y)*w + x
								if op == runtime.PoolAvg {
									want[i] += float64(float32(gr) / (k0 * k1))
								} else if v := float64(afv[i]); v > best {
									bi, best = i, v
								}
							}
						}
						if bi >= 0 {
							want[bi] += gr
						}
					}
				}
			}
			checkNear(t, f64s(got), want, 1e-6, "pool_2d_back")
		})
	}
}

func TestWindowsAndRelPos(t *testing.T) {
	t.Run("win_part/unpart", func(t *testing.T) {
		c, m := runtime.NewContext(), HostMem{}
		a := c.NewTensor(runtime.TypeF32, 3, 5, 7)
		av := fillRand(t, m, a, 15)
		part := c.WinPart(a, 3)
		pv := computeNth(t, c, m, part, 2)
		if part.Ne != [4]int64{3, 3, 3, 6} {
			t.Fatalf("win_part shape %v", part.Ne)
		}
		// Window 5 = (px 1, py 2): row (x, y) of the window is a's
		// (3 + x, 6 + y), 0 where that is outside a.
		for y := 0; y < 3; y++ {
			for x := 0; x < 3; x++ {
				for ch := 0; ch < 3; ch++ {
					want := float32(0)
					if ax, ay := 3+x, 6+y; ax < 5 && ay < 7 {
						want = av[(ay*5+ax)*3+ch]
					}
					if got := pv[((5*3+y)*3+x)*3+ch]; got != want {
						t.Fatalf("window 5 (%d, %d, %d) = %v, want %v", ch, x, y, got, want)
					}
				}
			}
		}
		back := c.WinUnpart(part, 5, 7, 3)
		checkNear(t, f64s(computeNth(t, c, m, back, 3)), f64s(av), 0, "win_unpart(win_part(a))")
	})
	t.Run("get_rel_pos", func(t *testing.T) {
		c, m := runtime.NewContext(), HostMem{}
		a := c.NewTensor(runtime.TypeF16, 4, 5)
		av := fillRand(t, m, a, 16)
		out := c.GetRelPos(a, 3, 3)
		got := computeNth(t, c, m, out, 2)
		var want []float64
		for q := 0; q < 3; q++ {
			for k := 0; k < 3; k++ {
				for i := 0; i < 4; i++ {
					want = append(want, float64(av[(3-1-k+q)*4+i]))
				}
			}
		}
		checkNear(t, f64s(got), want, 0, "get_rel_pos")
	})
	for _, inplace := range []bool{false, true} {
		t.Run(fmt.Sprint("add_rel_pos inplace=", inplace), func(t *testing.T) {
			c, m := runtime.NewContext(), HostMem{}
			const w, h1, h2, n = 3, 2, 2, 2
			a := c.NewTensor(runtime.TypeF32, w*w, h1*h2, n)
			pw, ph := c.NewTensor(runtime.TypeF32, w, h1, h2, n), c.NewTensor(runtime.TypeF32, w, h1, h2, n)
			av, pwv, phv := fillRand(t, m, a, 17), fillRand(t, m, pw, 18), fillRand(t, m, ph, 19)
			var out *runtime.Tensor
			if inplace {
				out = c.AddRelPosInplace(a, pw, ph)
			} else {
				out = c.AddRelPos(a, pw, ph)
			}
			got := computeNth(t, c, m, out, 3)
			var want []float64
			for r := 0; r < h1*h2*n; r++ {
				for y := 0; y < w; y++ {
					for x := 0; x < w; x++ {
						want = append(want, float64(av[r*w*w+y*w+x])+float64(phv[r*w+y])+float64(pwv[r*w+x]))
					}
				}
			}
			checkNear(t, f64s(got), want, 1e-6, "add_rel_pos")
		})
	}
}

// TestGetRowsBackFewerIDs checks GET_ROWS_BACK with f16 rows and fewer ids
// than rows (ggml adds only the rows that have an id).
func TestGetRowsBackFewerIDs(t *testing.T) {
	c, m := runtime.NewContext(), HostMem{}
	a := set(t, m, c.NewTensor(runtime.TypeF16, 2, 3), []float32{1, 2, 3, 4, 5, 6})
	ids := setI32(m, c.NewTensor(runtime.TypeI32, 2), []int32{1, 1})
	out := c.GetRowsBack(a, ids, c.NewTensor(runtime.TypeF32, 2, 3))
	got := computeNth(t, c, m, out, 1)
	checkNear(t, f64s(got), []float64{0, 0, 4, 6, 0, 0}, 0, "get_rows_back")
}

// TestConvUnsupported checks that shapes the kernels do not take are
// refused with a reason instead of computed.
func TestConvUnsupported(t *testing.T) {
	c := runtime.NewContext()
	in := c.NewTensor(runtime.TypeF32, 8, 8, 3, 1)
	ker := c.NewTensor(runtime.TypeF32, 3, 3, 3, 2)
	bad := c.NewOp(runtime.OpConv2D, runtime.TypeF32, [4]int64{6, 6, 2, 1}, ker, in) // stride 0
	for _, tc := range []struct {
		name string
		t    *runtime.Tensor
	}{
		{"conv_2d stride 0", bad},
		{"conv_2d wrong result", setOp(c.NewOp(runtime.OpConv2D, runtime.TypeF32, [4]int64{5, 6, 2, 1}, ker, in), 1, 1, 0, 0, 1, 1)},
		{"conv_3d channels", setOp(c.NewOp(runtime.OpConv3D, runtime.TypeF32, [4]int64{6, 6, 1, 1}, ker, in), 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 1, 1)},
		{"pool_1d i32", setOp(c.NewOp(runtime.OpPool1D, runtime.TypeF32, [4]int64{1, 1, 1, 1}, c.NewTensor(runtime.TypeI32, 2)), 0, 2, 2, 0)},
		{"conv_transpose_1d pad", setOp(c.NewOp(runtime.OpConvTranspose1D, runtime.TypeF32, [4]int64{8, 1, 1, 1}, c.NewTensor(runtime.TypeF32, 3, 1, 1), c.NewTensor(runtime.TypeF32, 4, 1)), 2, 1, 1)},
	} {
		if err := Supports(tc.t); err == nil {
			t.Errorf("%s: supported", tc.name)
		}
	}
}

func setOp(t *runtime.Tensor, vs ...int32) *runtime.Tensor {
	for i, v := range vs {
		t.SetOpParamI32(i, v)
	}
	return t
}
