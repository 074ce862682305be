package cpukernels

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestSeqOps checks the ops of ref_seq.go on small inputs worked by hand,
// computed whole and in parts.
func TestSeqOps(t *testing.T) {
	f32 := runtime.TypeF32
	in := func(t *testing.T, c *runtime.Context, m HostMem, v []float32, ne ...int64) *runtime.Tensor {
		return set(t, m, c.NewTensor(f32, ne...), v)
	}
	e3 := float32(math.Exp(-3))
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"solve_tri two columns", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.SolveTri(in(t, c, m, []float32{2, 0, 1, 4}, 2, 2), in(t, c, m, []float32{4, 2, 6, 5}, 2, 2), true, true, false)
		}, []float32{2, 1, 1, 1}},
		{"ssm_scan mamba-2, K=2", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			ids := setI32(m, c.NewTensor(runtime.TypeI32, 1), []int32{0})
			return c.SsmScan(in(t, c, m, []float32{0.5}, 1, 1, 1, 1), in(t, c, m, []float32{2, 1}, 1, 1, 2, 1),
				in(t, c, m, []float32{30, 30}, 1, 2, 1), in(t, c, m, []float32{-0.1}, 1, 1),
				in(t, c, m, []float32{1, 1}, 1, 1, 2, 1), in(t, c, m, []float32{3, 3}, 1, 1, 2, 1), ids, 2)
		}, func() []float32 {
			s1 := 0.5*e3 + 60
			s2 := s1*e3 + 30
			return []float32{3 * s1, 3 * s2, s2, s1}
		}()},
		{"ssm_scan mamba-1 picks ids", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			ids := setI32(m, c.NewTensor(runtime.TypeI32, 1), []int32{1})
			return c.SsmScan(in(t, c, m, []float32{9, 0.5}, 1, 1, 1, 2), in(t, c, m, []float32{2}, 1, 1, 1, 1),
				in(t, c, m, []float32{30}, 1, 1, 1), in(t, c, m, []float32{-0.1}, 1, 1),
				in(t, c, m, []float32{1}, 1, 1, 1, 1), in(t, c, m, []float32{3}, 1, 1, 1, 1), ids, 1)
		}, []float32{3 * (0.5*e3 + 60), 0.5*e3 + 60}},
		{"rwkv_wkv6", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.RwkvWkv6(in(t, c, m, []float32{1, 2}, 1, 1, 2), in(t, c, m, []float32{3, 4}, 1, 1, 2),
				in(t, c, m, []float32{1, 1}, 1, 1, 2), in(t, c, m, []float32{0.5}, 1, 1),
				in(t, c, m, []float32{0.5, 0.5}, 1, 1, 2), in(t, c, m, []float32{1}, 1, 1))
		}, []float32{2.5, 7.5, 9.75}},
		{"gated_linear_attn", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.GatedLinearAttn(in(t, c, m, []float32{1, 2}, 1, 1, 2), in(t, c, m, []float32{3, 4}, 1, 1, 2),
				in(t, c, m, []float32{1, 1}, 1, 1, 2), in(t, c, m, []float32{0.5, 0.5}, 1, 1, 2), in(t, c, m, []float32{1}, 1, 1), 2)
		}, []float32{7, 19.5, 9.75}},
		{"rwkv_wkv7", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			one := func(v float32) *runtime.Tensor { return in(t, c, m, []float32{v}, 1, 1, 1) }
			return c.RwkvWkv7(one(1), one(0.5), one(2), one(3), one(1), one(1), in(t, c, m, []float32{1}, 1, 1))
		}, []float32{7.5, 7.5}},
		{"gated_delta_net K=2", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			tok := func(a, b float32) *runtime.Tensor { return in(t, c, m, []float32{a, b}, 1, 1, 2, 1) }
			return c.GatedDeltaNet(tok(1, 1), tok(1, 1), tok(3, 5), tok(0, float32(math.Log(0.5))), tok(0.5, 0.5),
				in(t, c, m, []float32{1}, 1, 1, 1, 1), 2)
		}, []float32{2, 3, 3, 2}},
		{"lightning_indexer f16 keys", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			k := set(t, m, c.NewTensor(runtime.TypeF16, 2, 1, 2, 1), []float32{1, -2, 3, 1})
			mask := set(t, m, c.NewTensor(runtime.TypeF16, 2, 1, 1, 1), []float32{0, -1})
			return c.LightningIndexer(in(t, c, m, []float32{1, 0, 0, 1}, 2, 2, 1, 1), k, in(t, c, m, []float32{1, 2}, 2, 1, 1, 1), mask)
		}, []float32{1, 4}},
		{"dsv4_hc_comb hc=2", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			mixes := in(t, c, m, []float32{0, 0, 0, 0, 0, 0, float32(math.Log(3)), 0}, 8, 1)
			return c.Dsv4HcComb(mixes, in(t, c, m, []float32{0, 0, 1}, 3), in(t, c, m, make([]float32, 8), 8), 0, 1)
		}, []float32{0.4, 2.0 / 3, 0.6, 1.0 / 3}},
		{"dsv4_hc_pre", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Dsv4HcPre(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2, 1), in(t, c, m, []float32{1, 10}, 2, 1))
		}, []float32{31, 42}},
		{"dsv4_hc_pre gated", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Dsv4HcPreGated(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2, 1), in(t, c, m, make([]float32, 4), 2, 2, 1), 2)
		}, []float32{4, 6}},
		{"dsv4_hc_post", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Dsv4HcPost(in(t, c, m, []float32{1, 2}, 2, 1), in(t, c, m, []float32{1, 2, 3, 4}, 2, 2, 1),
				in(t, c, m, []float32{1, 10}, 2, 1), in(t, c, m, []float32{1, 0, 0, 1}, 2, 2, 1))
		}, []float32{2, 4, 13, 24}},
		{"dsv4_hc_post identity", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Dsv4HcPost(in(t, c, m, []float32{1, 2}, 2, 1), in(t, c, m, []float32{1, 2, 3, 4}, 2, 2, 1),
				in(t, c, m, []float32{1, 10}, 2, 1), nil)
		}, []float32{2, 4, 13, 24}},
	}
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/nth=%d", tc.name, nth), func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return tc.build(t, c, m) })
				if !near(got, tc.want, 1e-5) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// TestSeqOpsSplitInvariant: the sequence ops give the same bytes however
// many parts compute them, on shapes with several heads, sequences and
// tokens.
func TestSeqOpsSplitInvariant(t *testing.T) {
	f32 := runtime.TypeF32
	fill := func(t *testing.T, c *runtime.Context, m HostMem, seed int, lo, hi float32, ne ...int64) *runtime.Tensor {
		x := c.NewTensor(f32, ne...)
		n := 1
		for _, v := range ne {
			n *= int(v)
		}
		return set(t, m, x, seq(n, func(i int) float32 {
			u := float32(math.Mod(math.Sin(float64(i*7+seed*131))*43758.5453, 1))
			if u < 0 {
				u++
			}
			return lo + (hi-lo)*u
		}))
	}
	builds := map[string]func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor{
		"gated_delta_net kda": func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			const S, H, T, N = 8, 4, 3, 2
			return c.GatedDeltaNet(fill(t, c, m, 1, -1, 1, S, 2, T, 1), fill(t, c, m, 2, -1, 1, S, 2, T, 1),
				fill(t, c, m, 3, -1, 1, S, H, T, N), fill(t, c, m, 4, -2, 0, S, H, T, N),
				fill(t, c, m, 5, 0, 1, 1, H, T, N), fill(t, c, m, 6, -1, 1, S, S, H, N), 3)
		},
		"ssm_scan groups": func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			const ds, hd, nh, ng, nt, ns = 16, 4, 6, 2, 5, 2
			ids := setI32(m, c.NewTensor(runtime.TypeI32, ns), []int32{1, 0})
			return c.SsmScan(fill(t, c, m, 1, -1, 1, ds, hd, nh, ns), fill(t, c, m, 2, -1, 1, hd, nh, nt, ns),
				fill(t, c, m, 3, -1, 1, nh, nt, ns), fill(t, c, m, 4, -1, -0.5, 1, nh),
				fill(t, c, m, 5, -1, 1, ds, ng, nt, ns), fill(t, c, m, 6, -1, 1, ds, ng, nt, ns), ids, 3)
		},
		"rwkv_wkv7": func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			const S, H, T = 8, 5, 6
			tok := func(seed int) *runtime.Tensor { return fill(t, c, m, seed, -1, 1, S, H, T) }
			return c.RwkvWkv7(tok(1), tok(2), tok(3), tok(4), tok(5), tok(6), fill(t, c, m, 7, -1, 1, S*S*H, 2))
		},
		"lightning_indexer": func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			mask := set(t, m, c.NewTensor(runtime.TypeF16, 70, 3, 1, 1), make([]float32, 210))
			return c.LightningIndexer(fill(t, c, m, 1, -1, 1, 32, 4, 3, 2), fill(t, c, m, 2, -1, 1, 32, 1, 70, 2),
				fill(t, c, m, 3, 0, 1, 4, 3, 1, 2), mask)
		},
	}
	for name, b := range builds {
		t.Run(name, func(t *testing.T) {
			want := run(t, 1, func(c *runtime.Context, m HostMem) *runtime.Tensor { return b(t, c, m) })
			for _, nth := range []int{2, 3, 7} {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return b(t, c, m) })
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("nth %d: element %d = %v, want %v", nth, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestSeqOpsRejectBadNodes: nodes whose shapes, types or data do not fit
// (as a peer could send them) give errors, never panics.
func TestSeqOpsRejectBadNodes(t *testing.T) {
	f32 := runtime.TypeF32
	c := runtime.NewContext()
	m := HostMem{}
	s := c.NewTensor(f32, 1, 1, 1, 1)
	x := c.NewTensor(f32, 1, 1, 1, 1)
	dt := c.NewTensor(f32, 1, 1, 1)
	a := c.NewTensor(f32, 1, 1)
	b := c.NewTensor(f32, 1, 1, 1, 1)
	ids := setI32(m, c.NewTensor(runtime.TypeI32, 1), []int32{5})
	scan := c.SsmScan(s, x, dt, a, b, b, ids, 1)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	for _, tt := range []*runtime.Tensor{s, x, dt, a, b, scan} {
		m.Alloc(tt)
	}
	if err := Compute(scan, m.Mem, 0, 1); !errors.Is(err, runtime.ErrOutOfBounds) {
		t.Fatalf("sequence id out of range: %v", err)
	}

	bad := []func() *runtime.Tensor{
		func() *runtime.Tensor { // K in op params too big for the result
			n := c.NewOp(runtime.OpSsmScan, f32, scan.Ne, s, x, dt, a, b, b, ids)
			n.SetOpParamI32(0, 1<<30)
			return n
		},
		func() *runtime.Tensor { // GATED_DELTA_NET with an i32 state
			n := c.NewOp(runtime.OpGatedDeltaNet, f32, [4]int64{1, 2, 1, 1}, x, x, x, x, x, ids)
			n.SetOpParamI32(0, 1)
			return n
		},
		func() *runtime.Tensor { // RWKV_WKV6 missing its state
			return c.NewOp(runtime.OpRwkvWkv6, f32, [4]int64{1, 2, 1, 1}, dt, dt, dt, dt, dt)
		},
		func() *runtime.Tensor { // DSV4_HC_COMB with 7 mixes: no hc fits
			return c.NewOp(runtime.OpDsv4HcComb, f32, [4]int64{1, 1, 1, 1}, c.NewTensor(f32, 7), c.NewTensor(f32, 3), c.NewTensor(f32, 7))
		},
		func() *runtime.Tensor { // LIGHTNING_INDEXER with an f32 mask
			return c.NewOp(runtime.OpLightningIndexer, f32, [4]int64{1, 1, 1, 1}, x, x, x, x)
		},
		func() *runtime.Tensor { // MAP_CUSTOM1 without a function, as from RPC
			return c.NewOp(runtime.OpMapCustom1, f32, x.Ne, x)
		},
	}
	for i, f := range bad {
		n := f()
		if err := Supports(n); !errors.Is(err, runtime.ErrUnsupported) {
			t.Errorf("case %d: Supports = %v, want ErrUnsupported", i, err)
		}
		if err := Compute(n, m.Mem, 0, 1); !errors.Is(err, runtime.ErrUnsupported) {
			t.Errorf("case %d: Compute = %v, want ErrUnsupported", i, err)
		}
	}
}

// TestCustomOps runs Go functions as MAP_CUSTOM1/2/3 and CUSTOM nodes.
func TestCustomOps(t *testing.T) {
	f32 := runtime.TypeF32
	double := func(dst runtime.CustomTensor, src []runtime.CustomTensor, ith, nth int) error {
		r0, r1 := RowRange(dst.Nelements(), ith, nth)
		for i := r0; i < r1; i++ {
			seqStore(dst.Data, uint64(i)*4, 2*seqLoad(src[0].Data, uint64(i)*4))
		}
		return nil
	}
	sum := func(dst runtime.CustomTensor, src []runtime.CustomTensor, ith, nth int) error {
		r0, r1 := RowRange(dst.Nelements(), ith, nth)
		for i := r0; i < r1; i++ {
			var v float32
			for _, s := range src {
				v += seqLoad(s.Data, uint64(i)*4)
			}
			seqStore(dst.Data, uint64(i)*4, v)
		}
		return nil
	}
	onePart := func(dst runtime.CustomTensor, src []runtime.CustomTensor, ith, nth int) error {
		if nth != 1 {
			return fmt.Errorf("nth = %d, want 1", nth)
		}
		return sum(dst, src, ith, nth)
	}
	in := func(t *testing.T, c *runtime.Context, m HostMem, v ...float32) *runtime.Tensor {
		return set(t, m, c.NewTensor(f32, int64(len(v))), v)
	}
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"map_custom1", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.MapCustom1(in(t, c, m, 1, 2, 3, 4, 5), double, -1)
		}, []float32{2, 4, 6, 8, 10}},
		{"map_custom1 inplace", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.MapCustom1Inplace(in(t, c, m, 1, 2, 3), double, 2)
		}, []float32{2, 4, 6}},
		{"map_custom2", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.MapCustom2(in(t, c, m, 1, 2), in(t, c, m, 10, 20), sum, 0)
		}, []float32{11, 22}},
		{"map_custom3 one task", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.MapCustom3(in(t, c, m, 1, 2), in(t, c, m, 10, 20), in(t, c, m, 100, 200), onePart, 1)
		}, []float32{111, 222}},
		{"custom", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Custom(f32, [4]int64{2, 1, 1, 1}, []*runtime.Tensor{in(t, c, m, 1, 2), in(t, c, m, 3, 4)}, sum, -1)
		}, []float32{4, 6}},
	}
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/nth=%d", tc.name, nth), func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return tc.build(t, c, m) })
				if !near(got, tc.want, 0) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	}

	// A function's error and panic come back as errors.
	errBoom := errors.New("boom")
	for _, fn := range []runtime.CustomFunc{
		func(runtime.CustomTensor, []runtime.CustomTensor, int, int) error { return errBoom },
		func(runtime.CustomTensor, []runtime.CustomTensor, int, int) error { panic("boom") },
	} {
		c := runtime.NewContext()
		m := HostMem{}
		x := in(t, c, m, 1)
		n := c.MapCustom1(x, fn, 0)
		m.Alloc(n)
		if err := Compute(n, m.Mem, 0, 1); err == nil {
			t.Fatal("failing custom function: no error")
		}
	}
}

// TestHcOfMixDim finds hc from (2+hc)·hc, and 0 where none fits.
func TestHcOfMixDim(t *testing.T) {
	for _, tc := range []struct{ n, want int64 }{
		{3, 1}, {8, 2}, {15, 3}, {24, 4}, {65 * 67, 65}, {7, 0}, {0, 0}, {-8, 0}, {1 << 62, 0}, {(1<<29 + 2) * (1 << 29), 1 << 29},
	} {
		if got := runtime.HyperConnections(tc.n); got != tc.want {
			t.Errorf("HyperConnections(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}
