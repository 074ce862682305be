package runtime

import (
	"errors"
	"testing"
)

// TestConvBuilders checks the shapes and op parameters of the convolution
// family's builders, and that bad shapes record ErrShape instead of
// building (or panicking).
func TestConvBuilders(t *testing.T) {
	f32, f16 := TypeF32, TypeF16
	tests := []struct {
		name   string
		build  func(c *Context) *Tensor
		ne     [MaxDims]int64 // zero: the build must fail with ErrShape
		params []int32
	}{
		{"conv_2d", func(c *Context) *Tensor {
			return c.Conv2DDirect(c.NewTensor(f16, 3, 3, 4, 8), c.NewTensor(f32, 10, 9, 4, 2), 1, 2, 1, 0, 1, 2)
		}, [MaxDims]int64{10, 3, 8, 2}, []int32{1, 2, 1, 0, 1, 2}},
		{"conv_2d channels", func(c *Context) *Tensor {
			return c.Conv2DDirect(c.NewTensor(f32, 3, 3, 3, 8), c.NewTensor(f32, 10, 9, 4, 2), 1, 1, 0, 0, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"conv_2d stride 0", func(c *Context) *Tensor {
			return c.Conv2DDirect(c.NewTensor(f32, 3, 3, 4, 8), c.NewTensor(f32, 10, 9, 4, 2), 0, 1, 0, 0, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"conv_2d kernel too big", func(c *Context) *Tensor {
			return c.Conv2DDirect(c.NewTensor(f32, 11, 3, 4, 8), c.NewTensor(f32, 10, 9, 4, 2), 1, 1, 0, 0, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"conv_2d_dw", func(c *Context) *Tensor {
			return c.Conv2DDwDirect(c.NewTensor(f32, 3, 3, 1, 5), c.NewTensor(f32, 8, 8, 5, 1), 2, 2, 1, 1, 1, 1)
		}, [MaxDims]int64{4, 4, 5, 1}, []int32{2, 2, 1, 1, 1, 1}},
		{"conv_2d_dw channels", func(c *Context) *Tensor {
			return c.Conv2DDwDirect(c.NewTensor(f32, 3, 3, 2, 5), c.NewTensor(f32, 8, 8, 5, 1), 1, 1, 0, 0, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"conv_3d", func(c *Context) *Tensor {
			return c.Conv3DDirect(c.NewTensor(f32, 3, 3, 3, 2*4), c.NewTensor(f32, 9, 8, 7, 2*3), 1, 1, 2, 1, 1, 0, 1, 1, 1, 2, 3, 4)
		}, [MaxDims]int64{9, 8, 3, 12}, []int32{1, 1, 2, 1, 1, 0, 1, 1, 1, 2, 3, 4}},
		{"conv_3d packing", func(c *Context) *Tensor {
			return c.Conv3DDirect(c.NewTensor(f32, 3, 3, 3, 7), c.NewTensor(f32, 9, 8, 7, 6), 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 3, 4)
		}, [MaxDims]int64{}, nil},
		{"im2col_3d", func(c *Context) *Tensor {
			return c.Im2col3D(c.NewTensor(f16, 3, 3, 3, 6), c.NewTensor(f32, 10, 10, 10, 6), 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, f32)
		}, [MaxDims]int64{81, 10, 10, 20}, []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 3}},
		{"im2col_3d channels", func(c *Context) *Tensor {
			return c.Im2col3D(c.NewTensor(f16, 3, 3, 3, 6), c.NewTensor(f32, 10, 10, 10, 7), 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, f32)
		}, [MaxDims]int64{}, nil},
		{"im2col_back", func(c *Context) *Tensor {
			return c.Im2colBack(c.NewTensor(f32, 2*3*3, 8, 8, 1), c.NewTensor(f32, 3, 3, 2, 1), [MaxDims]int64{8, 8, 2, 1}, 1, 1, 1, 1, 1, 1, true)
		}, [MaxDims]int64{8, 8, 2, 1}, []int32{1, 1, 1, 1, 1, 1, 1}},
		{"im2col_back columns", func(c *Context) *Tensor {
			return c.Im2colBack(c.NewTensor(f32, 17, 8, 8, 1), c.NewTensor(f32, 3, 3, 2, 1), [MaxDims]int64{8, 8, 2, 1}, 1, 1, 1, 1, 1, 1, true)
		}, [MaxDims]int64{}, nil},
		{"col2im_1d", func(c *Context) *Tensor { return c.Col2im1D(c.NewTensor(f32, 16*32, 197), 8, 32, 0) },
			[MaxDims]int64{196*8 + 16, 32, 1, 1}, []int32{8, 32, 0}},
		{"col2im_1d channels", func(c *Context) *Tensor { return c.Col2im1D(c.NewTensor(f32, 10, 5), 2, 3, 0) }, [MaxDims]int64{}, nil},
		{"conv_transpose_1d", func(c *Context) *Tensor {
			return c.ConvTranspose1D(c.NewTensor(f32, 16, 4, 3), c.NewTensor(f32, 10, 3), 2, 0, 1)
		}, [MaxDims]int64{34, 4, 1, 1}, []int32{2, 0, 1}},
		{"conv_transpose_1d padding", func(c *Context) *Tensor {
			return c.ConvTranspose1D(c.NewTensor(f32, 16, 4, 3), c.NewTensor(f32, 10, 3), 2, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"conv_transpose_2d", func(c *Context) *Tensor {
			return c.ConvTranspose2DP0(c.NewTensor(f16, 3, 2, 5, 4), c.NewTensor(f32, 6, 7, 4, 2), 2)
		}, [MaxDims]int64{13, 14, 5, 2}, []int32{2}},
		{"conv_transpose_2d channels", func(c *Context) *Tensor {
			return c.ConvTranspose2DP0(c.NewTensor(f16, 3, 2, 5, 3), c.NewTensor(f32, 6, 7, 4, 2), 2)
		}, [MaxDims]int64{}, nil},
		{"pool_2d_back", func(c *Context) *Tensor {
			return c.Pool2DBack(c.NewTensor(f32, 5, 5, 3), c.NewTensor(f32, 10, 10, 3), PoolMax, 3, 3, 2, 2, 1, 1)
		}, [MaxDims]int64{10, 10, 3, 1}, []int32{0, 3, 3, 2, 2, 1, 1}},
		{"pool_2d_back shape", func(c *Context) *Tensor {
			return c.Pool2DBack(c.NewTensor(f32, 4, 5, 3), c.NewTensor(f32, 10, 10, 3), PoolMax, 3, 3, 2, 2, 1, 1)
		}, [MaxDims]int64{}, nil},
		{"win_part", func(c *Context) *Tensor { return c.WinPart(c.NewTensor(f32, 4, 14, 9), 5) },
			[MaxDims]int64{4, 5, 5, 6}, []int32{3, 2, 5}},
		{"win_part window 0", func(c *Context) *Tensor { return c.WinPart(c.NewTensor(f32, 4, 14, 9), 0) }, [MaxDims]int64{}, nil},
		{"win_unpart", func(c *Context) *Tensor { return c.WinUnpart(c.NewTensor(f32, 4, 5, 5, 6), 14, 9, 5) },
			[MaxDims]int64{4, 14, 9, 1}, []int32{5}},
		{"win_unpart too few windows", func(c *Context) *Tensor { return c.WinUnpart(c.NewTensor(f32, 4, 5, 5, 5), 14, 9, 5) },
			[MaxDims]int64{}, nil},
		{"get_rel_pos", func(c *Context) *Tensor { return c.GetRelPos(c.NewTensor(f16, 8, 13), 7, 7) },
			[MaxDims]int64{8, 7, 7, 1}, nil},
		{"get_rel_pos qh != kh", func(c *Context) *Tensor { return c.GetRelPos(c.NewTensor(f16, 8, 13), 6, 7) }, [MaxDims]int64{}, nil},
		{"add_rel_pos", func(c *Context) *Tensor {
			return c.AddRelPos(c.NewTensor(f32, 9, 6, 2), c.NewTensor(f32, 3, 2, 3, 2), c.NewTensor(f32, 3, 2, 3, 2))
		}, [MaxDims]int64{9, 6, 2, 1}, []int32{0}},
		{"add_rel_pos inplace", func(c *Context) *Tensor {
			return c.AddRelPosInplace(c.NewTensor(f32, 9, 6, 2), c.NewTensor(f32, 3, 2, 3, 2), c.NewTensor(f32, 3, 2, 3, 2))
		}, [MaxDims]int64{9, 6, 2, 1}, []int32{1}},
		{"add_rel_pos shape", func(c *Context) *Tensor {
			return c.AddRelPos(c.NewTensor(f32, 8, 6, 2), c.NewTensor(f32, 3, 2, 3, 2), c.NewTensor(f32, 3, 2, 3, 2))
		}, [MaxDims]int64{}, nil},
		{"get_rows_back fewer ids", func(c *Context) *Tensor {
			return c.GetRowsBack(c.NewTensor(f32, 4, 3), c.NewTensor(TypeI32, 2), c.NewTensor(f32, 4, 5))
		}, [MaxDims]int64{4, 5, 1, 1}, nil},
		{"get_rows_back too many ids", func(c *Context) *Tensor {
			return c.GetRowsBack(c.NewTensor(f32, 4, 3), c.NewTensor(TypeI32, 4), c.NewTensor(f32, 4, 5))
		}, [MaxDims]int64{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			out := tc.build(c)
			if tc.ne == ([MaxDims]int64{}) {
				if out != nil || !errors.Is(c.Err(), ErrShape) {
					t.Fatalf("got %v, error %v; want ErrShape", out, c.Err())
				}
				return
			}
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			if out.Ne != tc.ne {
				t.Fatalf("ne %v, want %v", out.Ne, tc.ne)
			}
			for i, p := range tc.params {
				if out.OpParamI32(i) != p {
					t.Fatalf("op param %d = %d, want %d", i, out.OpParamI32(i), p)
				}
			}
		})
	}
}

// TestConv2DDwChannelsLast checks that a channels-densest input gives a
// result laid out the same way, as ggml_conv_2d_dw_direct does.
func TestConv2DDwChannelsLast(t *testing.T) {
	c := NewContext()
	in := c.Permute(c.NewTensor(TypeF32, 5, 8, 6, 1), 2, 0, 1, 3) // {8, 6, 5, 1}, channels densest
	out := c.Conv2DDwDirect(c.NewTensor(TypeF32, 3, 3, 1, 5), in, 1, 1, 1, 1, 1, 1)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	if want := [MaxDims]uint64{5 * 4, 5 * 4 * 8, 4, 5 * 4 * 8 * 6}; out.Nb != want {
		t.Fatalf("nb %v, want %v", out.Nb, want)
	}
}
