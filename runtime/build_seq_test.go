package runtime

import (
	"errors"
	"testing"
)

// TestBuildSeqOps checks the shapes, sources and op parameters of the
// sequence-model builders, and that bad operands give errors.
func TestBuildSeqOps(t *testing.T) {
	f32, f16, i32 := TypeF32, TypeF16, TypeI32
	type built struct {
		t     *Tensor
		op    Op
		ne    [MaxDims]int64
		param map[int]int32
	}
	ok := []struct {
		name  string
		build func(c *Context) built
	}{
		{"solve_tri", func(c *Context) built {
			return built{c.SolveTri(c.NewTensor(f32, 4, 4, 2), c.NewTensor(f32, 3, 4, 2), true, true, false), OpSolveTri, [4]int64{3, 4, 2, 1}, nil}
		}},
		{"ssm_scan K=3", func(c *Context) built {
			s := c.NewTensor(f32, 16, 4, 6, 2)
			x := c.NewTensor(f32, 4, 6, 5, 2)
			r := c.SsmScan(s, x, c.NewTensor(f32, 6, 5, 2), c.NewTensor(f32, 1, 6), c.NewTensor(f32, 16, 2, 5, 2),
				c.NewTensor(f32, 16, 2, 5, 2), c.NewTensor(i32, 2), 3)
			return built{r, OpSsmScan, [4]int64{4*6*5*2 + 3*16*4*6*2, 1, 1, 1}, map[int]int32{0: 3}}
		}},
		{"rwkv_wkv6", func(c *Context) built {
			tok := func() *Tensor { return c.NewTensor(f32, 8, 2, 6) }
			return built{c.RwkvWkv6(tok(), tok(), tok(), c.NewTensor(f32, 8, 2), tok(), c.NewTensor(f32, 8*8*2, 3)), OpRwkvWkv6, [4]int64{16, 6 + 24, 1, 1}, nil}
		}},
		{"gated_linear_attn", func(c *Context) built {
			tok := func() *Tensor { return c.NewTensor(f32, 8, 2, 6) }
			return built{c.GatedLinearAttn(tok(), tok(), tok(), tok(), c.NewTensor(f32, 128, 1), 0.5), OpGatedLinearAttn, [4]int64{16, 14, 1, 1}, map[int]int32{0: 0x3f000000}}
		}},
		{"rwkv_wkv7", func(c *Context) built {
			tok := func() *Tensor { return c.NewTensor(f32, 8, 2, 6) }
			return built{c.RwkvWkv7(tok(), tok(), tok(), tok(), tok(), tok(), c.NewTensor(f32, 128, 2)), OpRwkvWkv7, [4]int64{16, 22, 1, 1}, nil}
		}},
		{"gated_delta_net kda", func(c *Context) built {
			q := c.NewTensor(f32, 8, 2, 3, 1)
			r := c.GatedDeltaNet(q, c.NewTensor(f32, 8, 2, 3, 1), c.NewTensor(f32, 8, 4, 3, 2), c.NewTensor(f32, 8, 4, 3, 2),
				c.NewTensor(f32, 1, 4, 3, 2), c.NewTensor(f32, 8, 8, 4, 2), 2)
			return built{r, OpGatedDeltaNet, [4]int64{32, 3*2 + 2*8*2, 1, 1}, map[int]int32{0: 2}}
		}},
		{"lightning_indexer", func(c *Context) built {
			r := c.LightningIndexer(c.NewTensor(f32, 32, 4, 3, 2), c.NewTensor(TypeQ8_0, 32, 1, 70, 2), c.NewTensor(f32, 4, 3, 1, 2), c.NewTensor(f16, 70, 3, 1, 1))
			return built{r, OpLightningIndexer, [4]int64{70, 3, 1, 2}, nil}
		}},
		{"dsv4_hc_comb", func(c *Context) built {
			r := c.Dsv4HcComb(c.NewTensor(f32, 24, 5), c.NewTensor(f32, 3), c.NewTensor(f32, 24), 1e-6, 20)
			return built{r, OpDsv4HcComb, [4]int64{4, 4, 5, 1}, map[int]int32{0: 0x358637bd, 1: 20}}
		}},
		{"dsv4_hc_pre", func(c *Context) built {
			return built{c.Dsv4HcPre(c.NewTensor(f32, 7, 4, 5), c.NewTensor(f32, 4, 5)), OpDsv4HcPre, [4]int64{7, 5, 1, 1}, map[int]int32{1: 0}}
		}},
		{"dsv4_hc_pre_gated", func(c *Context) built {
			return built{c.Dsv4HcPreGated(c.NewTensor(f32, 7, 4, 5), c.NewTensor(f32, 7, 4, 5), 0.25), OpDsv4HcPre, [4]int64{7, 5, 1, 1}, map[int]int32{0: 0x3e800000, 1: 1}}
		}},
		{"dsv4_hc_post identity", func(c *Context) built {
			r := c.Dsv4HcPost(c.NewTensor(f32, 7, 5), c.NewTensor(f32, 7, 4, 5), c.NewTensor(f32, 4, 5), nil)
			return built{r, OpDsv4HcPost, [4]int64{7, 4, 5, 1}, nil}
		}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			b := tc.build(c)
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			if b.t.Op != b.op || b.t.Ne != b.ne || b.t.Type != f32 || !b.t.IsContiguous() {
				t.Fatalf("got %s %v %s, want %s %v", b.t.Op, b.t.Ne, b.t.Type, b.op, b.ne)
			}
			for i, v := range b.param {
				if b.t.OpParamI32(i) != v {
					t.Errorf("op param %d = %#x, want %#x", i, b.t.OpParamI32(i), v)
				}
			}
		})
	}

	bad := []struct {
		name  string
		want  error
		build func(c *Context) *Tensor
	}{
		{"solve_tri upper", ErrUnsupported, func(c *Context) *Tensor {
			return c.SolveTri(c.NewTensor(f32, 4, 4), c.NewTensor(f32, 3, 4), true, false, false)
		}},
		{"solve_tri not square", ErrShape, func(c *Context) *Tensor {
			return c.SolveTri(c.NewTensor(f32, 4, 3), c.NewTensor(f32, 3, 3), true, true, false)
		}},
		{"ssm_scan K with mamba-1 A", ErrShape, func(c *Context) *Tensor {
			return c.SsmScan(c.NewTensor(f32, 16, 1, 6, 2), c.NewTensor(f32, 1, 6, 5, 2), c.NewTensor(f32, 6, 5, 2),
				c.NewTensor(f32, 16, 6), c.NewTensor(f32, 16, 1, 5, 2), c.NewTensor(f32, 16, 1, 5, 2), c.NewTensor(i32, 2), 2)
		}},
		{"ssm_scan K overflows", ErrShape, func(c *Context) *Tensor {
			return c.SsmScan(c.NewTensor(f32, 16, 1, 6, 2), c.NewTensor(f32, 1, 6, 5, 2), c.NewTensor(f32, 6, 5, 2),
				c.NewTensor(f32, 1, 6), c.NewTensor(f32, 16, 1, 5, 2), c.NewTensor(f32, 16, 1, 5, 2), c.NewTensor(i32, 2), 1<<40)
		}},
		{"rwkv_wkv6 state size", ErrShape, func(c *Context) *Tensor {
			tok := func() *Tensor { return c.NewTensor(f32, 8, 2, 6) }
			return c.RwkvWkv6(tok(), tok(), tok(), c.NewTensor(f32, 8, 2), tok(), c.NewTensor(f32, 100, 1))
		}},
		{"rwkv_wkv7 token shapes differ", ErrShape, func(c *Context) *Tensor {
			tok := func() *Tensor { return c.NewTensor(f32, 8, 2, 6) }
			return c.RwkvWkv7(tok(), tok(), tok(), tok(), tok(), c.NewTensor(f32, 8, 2, 5), c.NewTensor(f32, 128, 2))
		}},
		{"gated_delta_net heads do not divide", ErrShape, func(c *Context) *Tensor {
			q := c.NewTensor(f32, 8, 3, 3, 1)
			return c.GatedDeltaNet(q, q, c.NewTensor(f32, 8, 4, 3, 1), c.NewTensor(f32, 1, 4, 3, 1), c.NewTensor(f32, 1, 4, 3, 1), c.NewTensor(f32, 8, 8, 4, 1), 1)
		}},
		{"gated_delta_net K=0", ErrShape, func(c *Context) *Tensor {
			q := c.NewTensor(f32, 8, 4, 3, 1)
			return c.GatedDeltaNet(q, q, q, c.NewTensor(f32, 1, 4, 3, 1), c.NewTensor(f32, 1, 4, 3, 1), c.NewTensor(f32, 8, 8, 4, 1), 0)
		}},
		{"lightning_indexer f32 mask", ErrShape, func(c *Context) *Tensor {
			return c.LightningIndexer(c.NewTensor(f32, 32, 4, 3, 2), c.NewTensor(f32, 32, 1, 70, 2), c.NewTensor(f32, 4, 3, 1, 2), c.NewTensor(f32, 70, 3, 1, 1))
		}},
		{"dsv4_hc_comb mix dim", ErrShape, func(c *Context) *Tensor {
			return c.Dsv4HcComb(c.NewTensor(f32, 23, 5), c.NewTensor(f32, 3), c.NewTensor(f32, 23), 1e-6, 20)
		}},
		{"dsv4_hc_comb n_iter", ErrShape, func(c *Context) *Tensor {
			return c.Dsv4HcComb(c.NewTensor(f32, 24, 5), c.NewTensor(f32, 3), c.NewTensor(f32, 24), 1e-6, 0)
		}},
		{"dsv4_hc_pre weights", ErrShape, func(c *Context) *Tensor {
			return c.Dsv4HcPre(c.NewTensor(f32, 7, 4, 5), c.NewTensor(f32, 3, 5))
		}},
		{"dsv4_hc_post comb", ErrShape, func(c *Context) *Tensor {
			return c.Dsv4HcPost(c.NewTensor(f32, 7, 5), c.NewTensor(f32, 7, 4, 5), c.NewTensor(f32, 4, 5), c.NewTensor(f32, 4, 3, 5))
		}},
		{"map_custom1 nil function", ErrGraph, func(c *Context) *Tensor {
			return c.MapCustom1(c.NewTensor(f32, 4), nil, 1)
		}},
		{"custom too many args", ErrGraph, func(c *Context) *Tensor {
			args := make([]*Tensor, MaxSrc+1)
			for i := range args {
				args[i] = c.NewTensor(f32, 1)
			}
			return c.Custom(f32, [4]int64{1, 1, 1, 1}, args, func(CustomTensor, []CustomTensor, int, int) error { return nil }, 1)
		}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			if r := tc.build(c); r != nil || !errors.Is(c.Err(), tc.want) {
				t.Fatalf("got %v, err %v; want nil and %v", r, c.Err(), tc.want)
			}
		})
	}
}

// TestBuildCustom checks the custom builders' results.
func TestBuildCustom(t *testing.T) {
	c := NewContext()
	fn := func(CustomTensor, []CustomTensor, int, int) error { return nil }
	a, b := c.NewTensor(TypeF16, 4, 2), c.NewTensor(TypeF32, 4, 2)
	m2 := c.MapCustom2(a, b, fn, 3)
	in := c.MapCustom1Inplace(a, fn, -1)
	cu := c.CustomInplace(b, []*Tensor{a}, fn, 2)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	if m2.Op != OpMapCustom2 || m2.Type != TypeF16 || m2.Ne != a.Ne || m2.Src[1] != b || m2.Custom.NTasks != 3 || m2.OpParamI32(2) != 3 {
		t.Fatalf("map_custom2: %v", m2)
	}
	if in.Op != OpMapCustom1 || in.ViewSrc != a || in.Custom == nil {
		t.Fatalf("map_custom1_inplace: %v", in)
	}
	if cu.Op != OpCustom || cu.ViewSrc != b || cu.Src[0] != b || cu.Src[1] != a || !cu.Op.IsCustom() {
		t.Fatalf("custom_inplace: %v", cu)
	}
}
