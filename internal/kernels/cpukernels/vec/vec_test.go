package vec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// guard fills the slots around the tested region; any change is an
// out-of-bounds write.
const guard = float32(-12345.5)

// randSlice returns n+off+8 values whose [off, off+n) part is random in
// [lo, hi) and the rest is guard.
func randSlice(r *rand.Rand, n, off int, lo, hi float32) []float32 {
	s := make([]float32, off+n+8)
	for i := range s {
		s[i] = guard
	}
	for i := off; i < off+n; i++ {
		s[i] = lo + (hi-lo)*r.Float32()
	}
	return s
}

func checkGuards(t *testing.T, s []float32, off, n int) {
	t.Helper()
	for i, x := range s {
		if (i < off || i >= off+n) && x != guard {
			t.Fatalf("guard slot %d (region [%d,%d)) overwritten: %v", i, off, off+n, x)
		}
	}
}

// closeRel reports whether got is within rel of want, relative to
// max(|want|, floor).
func closeRel(got, want, rel, floor float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), floor)
}

type binCase struct {
	name string
	fn   func(dst, a, b []float32)
	ref  func(a, b float32) float64
	lo   float32 // range of b (keeps Div away from 0)
	rel  float64
}

var binCases = []binCase{
	{"Add", Add, func(a, b float32) float64 { return float64(a + b) }, -2, 0},
	{"Sub", Sub, func(a, b float32) float64 { return float64(a - b) }, -2, 0},
	{"Mul", Mul, func(a, b float32) float64 { return float64(a * b) }, -2, 0},
	{"Div", Div, func(a, b float32) float64 { return float64(a / b) }, 0.25, 0},
	{"Scale", func(d, a, _ []float32) { Scale(d, a, 1.75) }, func(a, _ float32) float64 { return float64(a * 1.75) }, -2, 0},
	{"AddScalar", func(d, a, _ []float32) { AddScalar(d, a, -0.5) }, func(a, _ float32) float64 { return float64(a + -0.5) }, -2, 0},
	{"ScaleAdd", func(d, a, _ []float32) { ScaleAdd(d, a, 0.75) }, nil, -2, 1e-6},
	{"SiLU", func(d, a, _ []float32) { SiLU(d, a) }, func(a, _ float32) float64 { return float64(a) / (1 + math.Exp(-float64(a))) }, -2, 4e-7},
	{"Exp", func(d, a, _ []float32) { Exp(d, a) }, func(a, _ float32) float64 { return math.Exp(float64(a)) }, -2, 4e-7},
}

func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range binCases {
		for _, alias := range []string{"none", "dst=a", "dst=b"} {
			t.Run(tc.name+"/"+alias, func(t *testing.T) {
				for n := 0; n <= 67; n++ {
					for off := 0; off < 4; off++ {
						a := randSlice(r, n, off, -8, 8)
						b := randSlice(r, n, (off+1)%4, tc.lo, 2)
						d := randSlice(r, n, (off+2)%4, -1, 1)
						av := a[off : off+n]
						bv := b[(off+1)%4 : (off+1)%4+n]
						dv := d[(off+2)%4 : (off+2)%4+n]
						doff, dbuf := (off+2)%4, d
						switch alias {
						case "dst=a":
							dv, doff, dbuf = av, off, a
						case "dst=b":
							dv, doff, dbuf = bv, (off+1)%4, b
						}
						want := make([]float64, n)
						for i := range want {
							if tc.ref == nil { // ScaleAdd: dst += s*a
								want[i] = float64(dv[i]) + 0.75*float64(av[i])
							} else {
								want[i] = tc.ref(av[i], bv[i])
							}
						}
						tc.fn(dv, av, bv)
						checkGuards(t, dbuf, doff, n)
						for i := range want {
							if !closeRel(float64(dv[i]), want[i], tc.rel, 1) && float32(want[i]) != dv[i] {
								t.Fatalf("n=%d off=%d i=%d: got %v want %v", n, off, i, dv[i], want[i])
							}
						}
					}
				}
			})
		}
	}
}

func TestLengthsMismatch(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{1, 1, 1}
	d := []float32{0, 0, 0, 0, 0, 0}
	Add(d, a, b)
	if d[2] != 4 || d[3] != 0 {
		t.Fatalf("Add over min length: %v", d)
	}
	if got := Dot(a, b); got != 6 {
		t.Fatalf("Dot over min length: %v", got)
	}
	if got := ExpSub(d[:2], a, 1); math.Abs(got-(1+math.E)) > 1e-6 {
		t.Fatalf("ExpSub over min length: %v", got)
	}
}

func TestReductions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 67; n++ {
		for off := 0; off < 4; off++ {
			t.Run(fmt.Sprintf("n%d/off%d", n, off), func(t *testing.T) {
				a := randSlice(r, n, off, -4, 4)[off : off+n]
				b := randSlice(r, n, 3-off, -4, 4)[3-off : 3-off+n]
				var dot, abs, sum, sumAbs, sq float64
				mx := float32(math.Inf(-1))
				for i := range a {
					x, y := float64(a[i]), float64(b[i])
					dot += x * y
					abs += math.Abs(x * y)
					sum += x
					sumAbs += math.Abs(x)
					sq += x * x
					mx = max(mx, a[i])
				}
				if got := float64(Dot(a, b)); math.Abs(got-dot) > 1e-6*abs+1e-30 {
					t.Errorf("Dot = %v, want %v", got, dot)
				}
				if got := Sum64(a); math.Abs(got-sum) > 1e-12*sumAbs {
					t.Errorf("Sum64 = %v, want %v", got, sum)
				}
				if got := Sum(a); got != float32(Sum64(a)) {
					t.Errorf("Sum = %v, want %v", got, float32(sum))
				}
				if got := SumSq(a); math.Abs(got-sq) > 1e-12*sq {
					t.Errorf("SumSq = %v, want %v", got, sq)
				}
				if got := Max(a); got != mx {
					t.Errorf("Max = %v, want %v", got, mx)
				}
				// ExpSub: soft-max numerator and denominator, in place too.
				m := Max(a)
				want := make([]float64, n)
				var es float64
				for i, x := range a {
					want[i] = math.Exp(float64(x - m))
					es += want[i]
				}
				dst := make([]float32, n)
				got := ExpSub(dst, a, m)
				cp := append([]float32(nil), a...)
				got2 := ExpSub(cp, cp, m)
				if got != got2 || math.Abs(got-es) > 1e-6*math.Max(es, 1) {
					t.Errorf("ExpSub sum = %v (in place %v), want %v", got, got2, es)
				}
				for i := range dst {
					if dst[i] != cp[i] || !closeRel(float64(dst[i]), want[i], 4e-7, 1e-30) {
						t.Fatalf("ExpSub[%d] = %v (in place %v), want %v", i, dst[i], cp[i], want[i])
					}
				}
			})
		}
	}
}

func TestMaxSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		in   []float32
		want float32
	}{
		{"empty", nil, float32(math.Inf(-1))},
		{"neginf", []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, float32(math.Inf(-1))},
		{"inf", []float32{1, inf, 2, 3, 4, 5, 6, 7, 8, 9, 10}, inf},
		{"last", append(make([]float32, 40), 3), 3},
		{"negative", []float32{-5, -3, -4, -9, -7, -8, -6, -10, -11, -12}, -3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Max(tc.in); got != tc.want {
				t.Fatalf("Max = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestExpAccuracy(t *testing.T) {
	const n = 1 << 16
	x := make([]float32, n)
	for i := range x {
		x[i] = -87 + 175*float32(i)/n
	}
	y := make([]float32, n)
	Exp(y, x)
	var num, den, worst float64
	for i := range x {
		w := math.Exp(float64(x[i]))
		d := float64(y[i]) - w
		num += d * d
		den += w * w
		worst = max(worst, math.Abs(d)/w)
	}
	nmse := num / den
	t.Logf("exp: NMSE %.3g, worst relative error %.3g", nmse, worst)
	if nmse > 1e-10 || worst > 5e-7 {
		t.Fatalf("exp NMSE %.3g (limit 1e-10), worst relative error %.3g", nmse, worst)
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	specials := []struct {
		in, want float32
	}{
		{0, 1}, {float32(math.Inf(-1)), 0}, {inf, inf}, {100, inf}, {89, inf},
		{-200, 0}, {-104, 0}, {1, float32(math.E)}, {nan, nan}, {-1e30, 0}, {1e30, inf},
	}
	for _, s := range specials {
		t.Run(fmt.Sprint(s.in), func(t *testing.T) {
			in := make([]float32, 19) // through the vector path and the tail
			for i := range in {
				in[i] = s.in
			}
			out := make([]float32, len(in))
			Exp(out, in)
			for i, v := range out {
				ok := v == s.want || (s.want != s.want && v != v)
				if !ok {
					t.Fatalf("exp(%v)[%d] = %v, want %v", s.in, i, v, s.want)
				}
			}
		})
	}
}

// TestExpEdges checks exp where the float32 result leaves the normal
// range: finite up to FLT_MAX (x in [88.3763, 88.7228] once made 2^128 and
// +Inf) and subnormal below 2^-126 (once flushed to 0), on the vector path
// and the tail alike.
func TestExpEdges(t *testing.T) {
	var xs []float32
	for x := float32(88.3); x < 88.75; x = math.Nextafter32(x, 100) {
		xs = append(xs, x)
		for range 97 { // every 98th float32 of the range, plus its ends
			x = math.Nextafter32(x, 100)
		}
	}
	xs = append(xs, 88.3763, 88.72283, math.Nextafter32(88.72283, 0), 88.7229)
	for x := float32(-87.5); x > -104.5; x -= 0.0137 {
		xs = append(xs, x)
	}
	xs = append(xs, -87.33654, -87.33655, -103.27893, -103.9721, -103.97209)
	for len(xs)%8 != 3 { // a tail too
		xs = append(xs, 0.5)
	}
	got := make([]float32, len(xs))
	Exp(got, xs)
	for i, x := range xs {
		want := float32(math.Exp(float64(x)))
		g := got[i]
		if math.IsInf(float64(want), 1) != math.IsInf(float64(g), 1) {
			t.Fatalf("exp(%v) = %v, want %v", x, g, want)
		}
		if math.IsInf(float64(want), 1) {
			continue
		}
		// Within 1 ulp of the correctly rounded result; in the subnormal
		// range the ulp is 2^-149.
		ulp := math.Nextafter32(want, float32(math.Inf(1))) - want
		if d := math.Abs(float64(g - want)); d > float64(ulp) {
			t.Fatalf("exp(%v) = %v (%#x), want %v (%#x)", x, g, math.Float32bits(g), want, math.Float32bits(want))
		}
		if want != 0 && g == 0 {
			t.Fatalf("exp(%v) flushed to 0, want %v", x, want)
		}
	}
}

// gemmRef is the plain triple loop, in float64.
func gemmRef(m, n, k int, a []float32, lda int, b []float32, ldb int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(a[i*lda+p]) * float64(b[j*ldb+p])
			}
			c[i*n+j] = s
		}
	}
	return c
}

type gemmCase struct{ m, n, k, padA, padB, padC, off int }

func gemmCases() []gemmCase {
	cs := []gemmCase{
		{0, 0, 0, 0, 0, 0, 0}, {1, 1, 1, 0, 0, 0, 1}, {0, 5, 3, 0, 0, 0, 0}, {5, 0, 3, 0, 0, 0, 0},
		{3, 4, 0, 0, 0, 0, 0}, {6, 16, 8, 0, 0, 0, 0}, {7, 17, 9, 1, 2, 3, 1},
		{12, 32, 64, 0, 0, 0, 0}, {13, 33, 67, 3, 1, 2, 3}, {67, 67, 67, 1, 1, 1, 2},
		{1, 67, 300, 0, 5, 0, 1}, {2, 40, 257, 0, 0, 7, 0}, {5, 100, 31, 1, 0, 0, 3},
		{130, 50, 600, 2, 3, 1, 1}, {40, 300, 520, 0, 0, 0, 0}, {200, 130, 33, 1, 1, 1, 1},
		{13, 1100, 270, 1, 0, 3, 2}, {3, 20, 64, 0, 0, 0, 0}, {4, 33, 9, 1, 1, 1, 1},
		{1, 19, 4100, 0, 1, 0, 3}, {3, 13, 4200, 1, 0, 2, 1}, {16, 17, 5, 0, 0, 0, 0}, {1, 16, 7, 0, 0, 0, 0},
		{20, 1040, 300, 1, 2, 3, 1}, {125, 19, 9, 0, 0, 0, 2}, {16, 40, 30, 1, 0, 2, 0}, {29, 300, 270, 0, 3, 1, 1},
		// One row of a (gemv512 at avx512): four-row calls and single rows,
		// k a multiple of 32 or with a tail.
		{1, 37, 64, 0, 0, 0, 1}, {1, 6, 96, 0, 3, 1, 0}, {1, 9, 33, 1, 0, 0, 2}, {1, 4, 32, 0, 0, 0, 0},
	}
	for m := 1; m <= 13; m += 3 {
		for n := 1; n <= 35; n += 5 {
			for _, k := range []int{1, 3, 8, 17} {
				cs = append(cs, gemmCase{m, n, k, m % 3, n % 2, k % 3, (m + n) % 4})
			}
		}
	}
	return cs
}

// gemmOperands builds a, b and a guarded c for one case; c's [coff, ...)
// block with stride ldc is the result.
func gemmOperands(r *rand.Rand, tc gemmCase) (a, b, c []float32, lda, ldb, ldc, coff int) {
	lda, ldb, ldc = tc.k+tc.padA, tc.k+tc.padB, tc.n+tc.padC
	a = randSlice(r, tc.m*lda, tc.off, -1, 1)[tc.off:]
	b = randSlice(r, tc.n*ldb, 3-tc.off, -1, 1)[3-tc.off:]
	c = make([]float32, tc.off+tc.m*ldc+8)
	for i := range c {
		c[i] = guard
	}
	return a, b, c, lda, ldb, ldc, tc.off
}

func checkGemmResult(t *testing.T, tc gemmCase, a, b, c []float32, lda, ldb, ldc, coff int) {
	t.Helper()
	want := gemmRef(tc.m, tc.n, tc.k, a, lda, b, ldb)
	for idx, x := range c {
		rel := idx - coff
		i, j := 0, -1
		if rel >= 0 && ldc > 0 {
			i, j = rel/ldc, rel%ldc
		}
		if rel < 0 || j < 0 || i >= tc.m || j >= tc.n {
			if x != guard {
				t.Fatalf("%+v: c[%d] outside the result was written: %v", tc, idx, x)
			}
			continue
		}
		w := want[i*tc.n+j]
		if math.Abs(float64(x)-w) > 2e-6*float64(tc.k)+1e-6 {
			t.Fatalf("%+v: c[%d][%d] = %v, want %v", tc, i, j, x, w)
		}
	}
}

func TestGemmNT(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range gemmCases() {
		t.Run(fmt.Sprintf("%dx%dx%d", tc.m, tc.n, tc.k), func(t *testing.T) {
			a, b, c, lda, ldb, ldc, coff := gemmOperands(r, tc)
			if err := GemmNT(tc.m, tc.n, tc.k, a, lda, b, ldb, c[coff:], ldc); err != nil {
				t.Fatal(err)
			}
			checkGemmResult(t, tc, a, b, c, lda, ldb, ldc, coff)
		})
	}
}

func TestGemmNTParts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []gemmCase{{1, 67, 33, 0, 0, 0, 1}, {67, 5, 20, 1, 0, 0, 0}, {50, 70, 40, 0, 1, 2, 3}, {7, 200, 9, 0, 0, 0, 0}, {130, 40, 17, 0, 0, 0, 0}}
	for _, tc := range cases {
		for nth := 1; nth <= 5; nth++ {
			t.Run(fmt.Sprintf("%dx%dx%d/%d", tc.m, tc.n, tc.k, nth), func(t *testing.T) {
				a, b, c, lda, ldb, ldc, coff := gemmOperands(r, tc)
				covered := 0
				for ith := nth - 1; ith >= 0; ith-- {
					if err := GemmNTPart(ith, nth, tc.m, tc.n, tc.k, a, lda, b, ldb, c[coff:], ldc); err != nil {
						t.Fatal(err)
					}
					i0, i1, j0, j1 := GemmNTSplit(ith, nth, tc.m, tc.n)
					covered += max(0, i1-i0) * max(0, j1-j0)
				}
				if covered != tc.m*tc.n {
					t.Fatalf("parts cover %d elements, want %d", covered, tc.m*tc.n)
				}
				checkGemmResult(t, tc, a, b, c, lda, ldb, ldc, coff)
				for i := range c {
					c[i] = guard
				}
				if err := GemmNTParallel(nth, tc.m, tc.n, tc.k, a, lda, b, ldb, c[coff:], ldc); err != nil {
					t.Fatal(err)
				}
				checkGemmResult(t, tc, a, b, c, lda, ldb, ldc, coff)
			})
		}
	}
}

func TestGemmNTErrors(t *testing.T) {
	a := make([]float32, 12)
	c := make([]float32, 9)
	tests := []struct {
		name                string
		m, n, k, la, lb, lc int
		a, b, c             []float32
	}{
		{"negative", -1, 2, 2, 2, 2, 2, a, a, c},
		{"lda", 2, 2, 3, 2, 3, 2, a, a, c},
		{"ldb", 2, 2, 3, 3, 2, 2, a, a, c},
		{"ldc", 2, 3, 3, 3, 3, 2, a, a, c},
		{"short a", 5, 2, 3, 3, 3, 2, a, a, make([]float32, 10)},
		{"short b", 2, 5, 3, 3, 3, 5, a, a, make([]float32, 10)},
		{"short c", 3, 3, 3, 3, 3, 3, a, a, c[:8]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := GemmNT(tc.m, tc.n, tc.k, tc.a, tc.la, tc.b, tc.lb, tc.c, tc.lc)
			if !errors.Is(err, ErrShape) {
				t.Fatalf("GemmNT error = %v, want ErrShape", err)
			}
			if err := GemmNTParallel(3, tc.m, tc.n, tc.k, tc.a, tc.la, tc.b, tc.lb, tc.c, tc.lc); !errors.Is(err, ErrShape) {
				t.Fatalf("GemmNTParallel error = %v, want ErrShape", err)
			}
		})
	}
	if err := GemmNTPart(3, 3, 1, 1, 1, a, 1, a, 1, c, 1); !errors.Is(err, ErrShape) {
		t.Fatalf("GemmNTPart(3 of 3) error = %v, want ErrShape", err)
	}
}

// TestElementwiseLarge covers outputs big enough for the non-temporal
// stores, at every alignment of dst, in place too.
func TestElementwiseLarge(t *testing.T) {
	const n = 1<<18 + 13
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range binCases[:6] {
		for off := 0; off < 8; off += 3 {
			for _, inPlace := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/off%d/inplace=%v", tc.name, off, inPlace), func(t *testing.T) {
					a := randSlice(r, n, off, -8, 8)
					b := randSlice(r, n, 1, tc.lo, 2)
					av, bv := a[off:off+n], b[1:1+n]
					want := make([]float32, n)
					for i := range want {
						want[i] = float32(tc.ref(av[i], bv[i]))
					}
					d := randSlice(r, n, off, -1, 1)
					dv, dbuf := d[off:off+n], d
					if inPlace {
						dv, dbuf = av, a
					}
					tc.fn(dv, av, bv)
					checkGuards(t, dbuf, off, n)
					for i := range want {
						if dv[i] != want[i] {
							t.Fatalf("i=%d: got %v want %v", i, dv[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestExpSubLong covers ExpSub's blocked float64 sum over many blocks.
func TestExpSubLong(t *testing.T) {
	for _, n := range []int{127, 128, 129, 1000, 4096 + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a := fill(n, 3)
			d := make([]float32, n)
			got := ExpSub(d, a, 0.5)
			var want float64
			for i, x := range a {
				want += math.Exp(float64(x - 0.5))
				if !closeRel(float64(d[i]), math.Exp(float64(x-0.5)), 3e-7, 1e-30) {
					t.Fatalf("d[%d] = %v, want %v", i, d[i], math.Exp(float64(x-0.5)))
				}
			}
			if math.Abs(got-want) > 1e-6*want {
				t.Fatalf("sum = %v, want %v", got, want)
			}
		})
	}
}

func TestPeakGFLOPS(t *testing.T) {
	for _, w := range []int{0, 1, 2} {
		if g := PeakGFLOPS(w, 2*time.Millisecond); !(g > 0) || math.IsInf(g, 0) {
			t.Fatalf("PeakGFLOPS(%d) = %v", w, g)
		}
	}
	if s := Implementation(); s != "go" && s != "avx2+fma" && s != "avx512+avx2+fma" {
		t.Fatalf("Implementation() = %q", s)
	}
}
