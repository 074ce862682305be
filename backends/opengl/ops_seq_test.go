//go:build opengl

package opengl

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// seqIDs fills the i32 input named "ids" with the sequence ids n-1, n-2,
// …, so that SSM_SCAN reads the states in another order than its own.
func seqIDs(n int) func(*runtime.Tensor, int, *rand.Rand) []byte {
	return func(tt *runtime.Tensor, _ int, _ *rand.Rand) []byte {
		if tt.Name != "ids" {
			return nil
		}
		out := make([]byte, 4*tt.Nelements())
		for i := range int(tt.Nelements()) {
			binary.LittleEndian.PutUint32(out[4*i:], uint32((n-1-i)%n))
		}
		return out
	}
}

// ssmCase is SSM_SCAN with d_state nc, head_dim nr, nh heads in ng
// groups, nt tokens, ns sequences, A {aN, nh} and K snapshots.
func ssmCase(nc, nr, nh, ng, nt, ns, aN, k int64) opCase {
	f32 := runtime.TypeF32
	return opCase{name: fmt.Sprintf("ssm_scan_nc%d_nr%d_nh%d_ng%d_nt%d_ns%d_a%d_k%d", nc, nr, nh, ng, nt, ns, aN, k),
		build: func(c *runtime.Context) *runtime.Tensor {
			return c.SsmScan(in(c, f32, "s", nc, nr, nh, ns), in(c, f32, "x", nr, nh, nt, ns), in(c, f32, "dt", nh, nt, ns),
				in(c, f32, "A", aN, nh), in(c, f32, "B", nc, ng, nt, ns), in(c, f32, "C", nc, ng, nt, ns), in(c, runtime.TypeI32, "ids", ns), k)
		}, fill: seqIDs(int(ns))}
}

// gdnCase is GATED_DELTA_NET with head size S, H value heads (H/rep for
// q and k), T tokens, N sequences, a g per column (kda) and K snapshots.
func gdnCase(S, H, rep, T, N int64, kda bool, k int64) opCase {
	f32 := runtime.TypeF32
	gn := int64(1)
	if kda {
		gn = S
	}
	return opCase{name: fmt.Sprintf("gated_delta_net_S%d_H%d_rep%d_T%d_N%d_kda%v_K%d", S, H, rep, T, N, kda, k),
		build: func(c *runtime.Context) *runtime.Tensor {
			return c.GatedDeltaNet(in(c, f32, "q", S, H/rep, T, N), in(c, f32, "k", S, H/rep, T, N), in(c, f32, "v", S, H, T, N),
				in(c, f32, "g", gn, H, T, N), in(c, f32, "beta", 1, H, T, N), in(c, f32, "state", S, S, H, N), k)
		}}
}

// TestOpsSeq compares seq.comp's ops with the CPU backend.
func TestOpsSeq(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32 := runtime.TypeF32
	cases := []opCase{
		ssmCase(16, 1, 8, 1, 5, 2, 16, 1), // Mamba-1: A per state element
		ssmCase(13, 4, 4, 2, 6, 3, 1, 1),  // Mamba-2, d_state not a multiple of 8
		ssmCase(32, 8, 4, 2, 8, 2, 1, 3),  // K snapshots
		gdnCase(16, 4, 1, 3, 2, false, 1),
		gdnCase(64, 4, 2, 5, 2, true, 1),
		gdnCase(40, 2, 1, 4, 1, false, 3), // a tail after 32
		gdnCase(32, 4, 2, 4, 2, true, 4),
	}
	for _, sh := range [][3]int64{{8, 3, 4}, {16, 2, 6}} { // S, H, T
		S, H, T := sh[0], sh[1], sh[2]
		for _, ns := range []int64{1, 2} {
			tok := func(c *runtime.Context, name string) *runtime.Tensor { return in(c, f32, name, S, H, T) }
			st := func(c *runtime.Context) *runtime.Tensor { return in(c, f32, "state", S*S*H, ns) }
			cases = append(cases,
				opCase{name: fmt.Sprintf("rwkv_wkv6_S%d_H%d_T%d_ns%d", S, H, T, ns), build: func(c *runtime.Context) *runtime.Tensor {
					return c.RwkvWkv6(tok(c, "k"), tok(c, "v"), tok(c, "r"), in(c, f32, "tf", S, H), tok(c, "td"), st(c))
				}},
				opCase{name: fmt.Sprintf("gated_linear_attn_S%d_H%d_T%d_ns%d", S, H, T, ns), build: func(c *runtime.Context) *runtime.Tensor {
					return c.GatedLinearAttn(tok(c, "k"), tok(c, "v"), tok(c, "q"), tok(c, "g"), st(c), 0.37)
				}},
				opCase{name: fmt.Sprintf("rwkv_wkv7_S%d_H%d_T%d_ns%d", S, H, T, ns), build: func(c *runtime.Context) *runtime.Tensor {
					return c.RwkvWkv7(tok(c, "r"), tok(c, "w"), tok(c, "k"), tok(c, "v"), tok(c, "a"), tok(c, "b"), st(c))
				}},
			)
		}
	}
	for _, sh := range [][4]int64{{7, 3, 2, 1}, {33, 5, 3, 2}} { // n, k, B2, B3
		n, k, b2, b3 := sh[0], sh[1], sh[2], sh[3]
		cases = append(cases, opCase{name: fmt.Sprintf("solve_tri_n%d_k%d", n, k), build: func(c *runtime.Context) *runtime.Tensor {
			return c.SolveTri(in(c, f32, "a", n, n, b2, b3), in(c, f32, "b", k, n, b2, b3), true, true, false)
		}, fill: func(tt *runtime.Tensor, _ int, r *rand.Rand) []byte {
			if tt.Name != "a" {
				return nil
			}
			f := make([]float32, tt.Nelements()) // lower triangular, diagonal away from 0
			for i := range f {
				col, row := int64(i)%n, int64(i)/n%n
				switch {
				case col == row:
					f[i] = 1 + r.Float32()
				case col < row:
					f[i] = r.Float32()*0.2 - 0.1
				}
			}
			return encode(f32, f)
		}})
	}
	for _, kt := range []runtime.Type{f32, runtime.TypeF16, runtime.TypeBF16, runtime.TypeQ8_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeIQ4_NL} {
		for _, nm := range []int64{1, 2} {
			cases = append(cases, opCase{name: fmt.Sprintf("lightning_indexer_%s_nm%d", kt, nm), build: func(c *runtime.Context) *runtime.Tensor {
				return c.LightningIndexer(in(c, f32, "q", 64, 3, 5, 2), in(c, kt, "k", 64, 1, 37, 2), in(c, f32, "w", 3, 5, 1, 2),
					in(c, runtime.TypeF16, "mask", 37, 5, 1, nm))
			}, tol: 1e-6})
		}
	}
	for _, hc := range []int64{1, 4, 5} {
		cases = append(cases,
			opCase{name: fmt.Sprintf("dsv4_hc_comb_hc%d", hc), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Dsv4HcComb(in(c, f32, "mixes", (2+hc)*hc, 7), in(c, f32, "scale", 3), in(c, f32, "base", (2+hc)*hc), 1e-6, 5)
			}},
			opCase{name: fmt.Sprintf("dsv4_hc_pre_hc%d", hc), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Dsv4HcPre(in(c, f32, "x", 31, hc, 6), in(c, f32, "w", hc, 6))
			}},
			opCase{name: fmt.Sprintf("dsv4_hc_pre_gated_hc%d", hc), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Dsv4HcPreGated(in(c, f32, "x", 31, hc, 6), in(c, f32, "gate", 31, hc, 6), 0.7)
			}},
			opCase{name: fmt.Sprintf("dsv4_hc_post_hc%d", hc), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Dsv4HcPost(in(c, f32, "x", 31, 6), in(c, f32, "res", 31, hc, 6), in(c, f32, "post", hc, 6), in(c, f32, "comb", hc, hc, 6))
			}},
			opCase{name: fmt.Sprintf("dsv4_hc_post_identity_hc%d", hc), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Dsv4HcPost(in(c, f32, "x", 31, 6), in(c, f32, "res", 31, hc, 6), in(c, f32, "post", hc, 6), nil)
			}},
		)
	}
	for _, kt := range []runtime.Type{f32, runtime.TypeF16} {
		cases = append(cases,
			opCase{name: fmt.Sprintf("conv_3d_%s", kt), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Conv3DDirect(in(c, kt, "a", 3, 2, 3, 3*4), in(c, f32, "b", 9, 7, 6, 3*2), 1, 2, 1, 1, 0, 1, 1, 1, 2, 3, 2, 4)
			}, tol: 1e-6},
			opCase{name: fmt.Sprintf("conv_3d_%s_strided", kt), build: func(c *runtime.Context) *runtime.Tensor {
				return c.Conv3DDirect(in(c, kt, "a", 2, 3, 2, 2*3), in(c, f32, "b", 8, 9, 5, 2*1), 2, 1, 2, 0, 1, 0, 2, 1, 1, 2, 1, 3)
			}, tol: 1e-6},
		)
	}
	checkCases(t, b, cases)
}
