package llama

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/runtime"
)

func writeDemo(t *testing.T, w *Weights, typ runtime.Type) string {
	t.Helper()
	gw, err := NewGGUFWriter(w, typ)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "demo-"+typ.String()+".gguf")
	if err := gw.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func evalAll(t *testing.T, m *Model, prompt []int32) []float32 {
	t.Helper()
	got, err := m.Eval(prompt)
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Eval([]int32{int32(Argmax(got[len(got)-m.cfg.Vocab:]))})
	if err != nil {
		t.Fatal(err)
	}
	return append(got, next...)
}

// TestGGUFRoundTrip writes the built-in weights as a GGUF file and runs it:
// in place over the mapping and copied into CPU buffers, the logits equal
// those of the same weights placed by New, bit for bit (f32 and q8_0
// quantize the same way); f16 and bf16 stay close to f32.
func TestGGUFRoundTrip(t *testing.T) {
	prompt := []int32{1, 5, 9, 3}
	for _, tc := range []struct {
		name string
		typ  runtime.Type
		cfg  func(*Config)
		tol  float64 // 0: bit-exact against New
	}{
		{"f32", runtime.TypeF32, func(*Config) {}, 0},
		{"q8_0", runtime.TypeQ8_0, func(*Config) {}, 0},
		{"f32-gqa", runtime.TypeF32, func(c *Config) { c.KVHeads = 2 }, 0},
		{"f32-head-size", runtime.TypeF32, func(c *Config) { c.HeadSize, c.KVHeads = 32, 2 }, 0},
		{"f16", runtime.TypeF16, func(*Config) {}, 2e-2},
		{"bf16", runtime.TypeBF16, func(*Config) {}, 2e-1},
		{"q4_0", runtime.TypeQ4_0, func(*Config) {}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.cfg(&cfg)
			if tc.tol == 0 {
				cfg.WeightType = tc.typ
			}
			w := GenerateWeights(cfg)
			path := writeDemo(t, w, tc.typ)
			want := evalAll(t, newModel(t, w, 2, Options{}), prompt)
			for _, copyWeights := range []bool{false, true} {
				var calls int
				var last, total uint64
				be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
				defer be.Close()
				m, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}, Copy: copyWeights,
					Progress: func(d, n uint64) { calls++; last, total = d, n }})
				if err != nil {
					t.Fatal(err)
				}
				if m.Config().Vocab != cfg.Vocab || m.Config().NKVHeads() != cfg.NKVHeads() || m.Config().Ctx != cfg.Ctx {
					t.Errorf("config %+v, want %+v", m.Config(), cfg)
				}
				bufName := m.wbuf.Type().Name()
				if copyWeights != (bufName != "CPU_Mapped") {
					t.Errorf("copy=%v: weights in %s", copyWeights, bufName)
				}
				if copyWeights && (calls == 0 || last != total) {
					t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
				}
				got := evalAll(t, m, prompt)
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
				var maxd float64
				for i := range want {
					maxd = math.Max(maxd, math.Abs(float64(got[i]-want[i])))
				}
				switch {
				case tc.tol == 0 && maxd != 0:
					t.Errorf("copy=%v: logits differ from New's by %g", copyWeights, maxd)
				case tc.tol > 0 && (maxd > tc.tol || math.IsNaN(maxd)):
					t.Errorf("copy=%v: logits differ from f32 by %g > %g", copyWeights, maxd, tc.tol)
				}
				t.Logf("copy=%v: max abs diff %.3g", copyWeights, maxd)
			}
		})
	}
}

// TestGGUFErrors: files gogml cannot run get errors naming why.
func TestGGUFErrors(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	tiny := func(edit func(gw *gguf.Writer)) string {
		gw, err := NewGGUFWriter(w, runtime.TypeF32)
		if err != nil {
			t.Fatal(err)
		}
		edit(gw)
		path := filepath.Join(t.TempDir(), "x.gguf")
		if err := gw.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	for _, tc := range []struct {
		name string
		path string
		want error
		msg  string
	}{
		{"arch", tiny(func(gw *gguf.Writer) { gw.Set("general.architecture", gguf.Of("gpt2")) }), ErrUnsupportedModel, `architecture "gpt2"`},
		{"extra tensor", tiny(func(gw *gguf.Writer) {
			gw.AddTensor("blk.0.ffn_gate_inp.weight", runtime.TypeF32, []int64{int64(cfg.Dim), 4}, make([]byte, 16*cfg.Dim))
		}), ErrUnsupportedModel, "ffn_gate_inp.weight is not used"},
		{"feed-forward bias of qwen2", tiny(func(gw *gguf.Writer) {
			gw.Set("general.architecture", gguf.Of("qwen2"))
			for kv, v := range map[string]int{"context_length": cfg.Ctx, "embedding_length": cfg.Dim, "block_count": cfg.Layers,
				"feed_forward_length": cfg.FFN, "attention.head_count": cfg.Heads} {
				gw.Set("qwen2."+kv, gguf.Of(uint32(v)))
			}
			gw.AddTensor("blk.0.ffn_up.bias", runtime.TypeF32, []int64{int64(cfg.FFN)}, make([]byte, 4*cfg.FFN))
		}), ErrUnsupportedModel, "ffn_up.bias is not used"},
		{"bias in one layer", tiny(func(gw *gguf.Writer) {
			gw.AddTensor("blk.0.attn_q.bias", runtime.TypeF32, []int64{int64(cfg.Dim)}, make([]byte, 4*cfg.Dim))
		}), gguf.ErrNotFound, "blk.1.attn_q.bias"},
		{"temperature scale", tiny(func(gw *gguf.Writer) {
			gw.Set("general.architecture", gguf.Of("mistral3"))
			for kv, v := range map[string]int{"context_length": cfg.Ctx, "embedding_length": cfg.Dim, "block_count": cfg.Layers,
				"feed_forward_length": cfg.FFN, "attention.head_count": cfg.Heads} {
				gw.Set("mistral3."+kv, gguf.Of(uint32(v)))
			}
			gw.Set("mistral3.attention.temperature_scale", gguf.Of(float32(0.1)))
		}), ErrUnsupportedModel, "temperature_scale"},
		{"rope scaling", tiny(func(gw *gguf.Writer) { gw.Set("llama.rope.scaling.type", gguf.Of("longrope")) }), ErrUnsupportedModel, "RoPE scaling"},
		{"rope scaling factor", tiny(func(gw *gguf.Writer) {
			gw.Set("llama.rope.scaling.type", gguf.Of("yarn"))
			gw.Set("llama.rope.scaling.factor", gguf.Of(float32(-2)))
		}), ErrConfig, "rope.scaling.factor"},
		{"rope scaling NaN", tiny(func(gw *gguf.Writer) {
			gw.Set("llama.rope.scaling.attn_factor", gguf.Of(float32(math.NaN())))
		}), ErrConfig, "attn_factor"},
		{"rope dims", tiny(func(gw *gguf.Writer) { gw.Set("llama.rope.dimension_count", gguf.Of(uint32(4))) }), ErrUnsupportedModel, "rope.dimension_count"},
		{"heads type", tiny(func(gw *gguf.Writer) { gw.Set("llama.attention.head_count", gguf.Of("four")) }), gguf.ErrValue, "head_count"},
		{"kv heads", tiny(func(gw *gguf.Writer) { gw.Set("llama.attention.head_count_kv", gguf.Of(uint32(3))) }), ErrConfig, "kv heads"},
		{"no file", filepath.Join(t.TempDir(), "missing.gguf"), os.ErrNotExist, "missing.gguf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := LoadGGUF(tc.path, LoadOptions{Options: Options{Backend: be}})
			if err == nil {
				m.Close()
				t.Fatal("loaded")
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

// TestGGUFSmallAlignment: a file with general.alignment 8 (legal GGUF)
// is copied into CPU buffers instead of used in place, with the same
// logits.
func TestGGUFSmallAlignment(t *testing.T) {
	cfg := testConfig()
	cfg.WeightType = runtime.TypeQ8_0
	w := GenerateWeights(cfg)
	src, err := gguf.Open(writeDemo(t, w, runtime.TypeQ8_0))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gw := gguf.NewWriter()
	if err := gw.Set(gguf.KeyAlignment, gguf.Of(uint32(8))); err != nil {
		t.Fatal(err)
	}
	for _, kv := range src.KV {
		if err := gw.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range src.Tensors {
		d, err := src.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		if err := gw.AddTensor(ti.Name, ti.Type, ti.Shape(), d); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "align8.gguf")
	if err := gw.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	defer be.Close()
	m, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if name := m.wbuf.Type().Name(); name == "CPU_Mapped" {
		t.Errorf("alignment 8: weights used in place")
	}
	prompt := []int32{1, 5, 9}
	want := evalAll(t, newModel(t, w, 2, Options{}), prompt)
	if got := evalAll(t, m, prompt); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Error("logits differ from New's")
	}
}

// TestGGUFWriterTypes: every writable type round-trips as a file gogml
// can run, with llama.cpp's general.file_type and its matrices in that
// type; a dim that is not whole blocks of the type is an error.
func TestGGUFWriterTypes(t *testing.T) {
	want := map[runtime.Type]uint32{runtime.TypeF32: 0, runtime.TypeF16: 1, runtime.TypeQ4_0: 2, runtime.TypeQ4_1: 3,
		runtime.TypeQ8_0: 7, runtime.TypeQ5_0: 8, runtime.TypeQ5_1: 9, runtime.TypeQ2_K: 10, runtime.TypeQ3_K: 11,
		runtime.TypeQ4_K: 14, runtime.TypeQ5_K: 16, runtime.TypeQ6_K: 18, runtime.TypeBF16: 32}
	if got := WritableTypes(); len(got) != len(want) {
		t.Fatalf("WritableTypes() = %v", got)
	}
	for _, typ := range WritableTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Dim, cfg.FFN, cfg.Layers, cfg.Vocab = 256, 512, 1, 32
			mf, err := gguf.Open(writeDemo(t, GenerateWeights(cfg), typ))
			if err != nil {
				t.Fatal(err)
			}
			defer mf.Close()
			if ft, err := mf.Int("general.file_type"); err != nil || ft != int64(want[typ]) {
				t.Errorf("general.file_type = %d (%v), want %d", ft, err, want[typ])
			}
			got, err := CheckGGUF(mf.File)
			if err != nil || got.WeightType != typ {
				t.Errorf("CheckGGUF: %v, weights %s", err, got.WeightType)
			}
			if typ.BlockSize() > 1 {
				cfg.Dim = int(typ.BlockSize()) / 2
				cfg.Heads = 2
				if _, err := NewGGUFWriter(GenerateWeights(cfg), typ); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "block") {
					t.Errorf("dim %d: %v", cfg.Dim, err)
				}
			}
		})
	}
}

// retag copies the GGUF file at src as architecture arch (the llama.*
// keys renamed), adding the tensors of add, and returns its path.
func retag(t *testing.T, src, arch string, add func(gw *gguf.Writer)) string {
	t.Helper()
	mf, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	gw := gguf.NewWriter()
	for _, kv := range mf.KV {
		key, v := kv.Key, kv.Value
		if rest, ok := strings.CutPrefix(key, "llama."); ok {
			key = arch + "." + rest
		}
		if key == "general.architecture" {
			v = gguf.Of(arch)
		}
		if err := gw.Set(key, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range mf.Tensors {
		d, err := mf.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		if err := gw.AddTensor(ti.Name, ti.Type, ti.Shape(), d); err != nil {
			t.Fatal(err)
		}
	}
	add(gw)
	path := filepath.Join(t.TempDir(), arch+".gguf")
	if err := gw.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGGUFArchs: the llama demo file retagged as each other architecture
// loads with that architecture's settings; mistral3 (llama's graph),
// llama with RoPE factors of 1 and qwen2 with zero biases give the logits
// of llama and of llama with NeoX RoPE; every architecture's logits are
// finite.
func TestGGUFArchs(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	src := writeDemo(t, w, runtime.TypeF32)
	hd := int64(cfg.HeadDim())
	f32s := func(n int64, v float32) []byte {
		b := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	each := func(gw *gguf.Writer, suffix string, n int64, v float32) {
		for l := 0; l < cfg.Layers; l++ {
			if err := gw.AddTensor(fmt.Sprintf("blk.%d.%s", l, suffix), runtime.TypeF32, []int64{n}, f32s(n, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	prompt := []int32{1, 5, 9, 3}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	defer be.Close()
	run := func(path string) (Config, []float32) {
		m, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		return m.Config(), evalAll(t, m, prompt)
	}
	_, llama := run(src)
	// llama with NeoX RoPE: the model built in memory from the same weights.
	neoxW := *w
	neoxW.Config.RopeMode = runtime.RopeNeoX
	neox := evalAll(t, newModel(t, &neoxW, 2, Options{}), prompt)
	for _, tc := range []struct {
		arch  string
		add   func(gw *gguf.Writer)
		check func(Config) bool
		want  []float32 // nil: only finite
	}{
		{"mistral3", func(*gguf.Writer) {}, func(c Config) bool { return c.RopeMode == runtime.RopeNormal }, llama},
		{"llama", func(gw *gguf.Writer) {
			if err := gw.AddTensor("rope_freqs.weight", runtime.TypeF32, []int64{hd / 2}, f32s(hd/2, 1)); err != nil {
				t.Fatal(err)
			}
		}, func(c Config) bool { return c.RopeFreqs }, llama},
		{"qwen2", func(gw *gguf.Writer) {
			each(gw, "attn_q.bias", int64(cfg.Dim), 0)
			each(gw, "attn_k.bias", int64(cfg.KVDim()), 0)
			each(gw, "attn_v.bias", int64(cfg.KVDim()), 0)
		}, func(c Config) bool { return c.QKVBias && c.RopeMode == runtime.RopeNeoX }, neox},
		{"qwen3", func(gw *gguf.Writer) {
			each(gw, "attn_q_norm.weight", hd, 1)
			each(gw, "attn_k_norm.weight", hd, 1)
		}, func(c Config) bool { return c.QKNorm && c.RopeMode == runtime.RopeNeoX }, nil},
		{"smollm3", func(gw *gguf.Writer) { each(gw, "attn_output.bias", int64(cfg.Dim), 0.1) },
			func(c Config) bool { return c.NoRopeStep == 4 && c.OutBias }, nil},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			c, got := run(retag(t, src, tc.arch, tc.add))
			if !tc.check(c) {
				t.Errorf("config %+v", c)
			}
			for i, v := range got {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("logit %d is %v", i, v)
				}
				if tc.want != nil && v != tc.want[i] {
					t.Fatalf("logit %d is %v, want %v", i, v, tc.want[i])
				}
			}
		})
	}
	// A qwen3 file without its q/k norms is an error naming them.
	if _, err := CheckGGUF(mustOpen(t, retag(t, src, "qwen3", func(*gguf.Writer) {})).File); !errors.Is(err, gguf.ErrNotFound) ||
		!strings.Contains(err.Error(), "attn_q_norm") {
		t.Errorf("qwen3 without norms: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *gguf.Mapped {
	t.Helper()
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestGGUFRepack loads q4_0, q8_0 and q4_K files on the CPU with the matrices
// repacked (the default) and without (NoRepack): the repacked ones live in
// a CPU_REPACK buffer, and the logits of a prompt long enough for the
// GEMM paths and of decode steps are the same bits.
func TestGGUFRepack(t *testing.T) {
	if _, ok := cpu.NewRepackBufferType(); !ok {
		t.Skip("no repacked kernels at this SIMD level")
	}
	prompt := make([]int32, 20)
	for i := range prompt {
		prompt[i] = int32(i*7%90 + 1)
	}
	// f16 moves where the mapping lacks huge pages (smallPagedF16): here
	// the scan says it has none at all.
	allSmall := func(b []byte) ([][2]uint64, bool) { return [][2]uint64{{0, uint64(len(b))}}, true }
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ4_K, runtime.TypeQ8_0, runtime.TypeF16} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Dim, cfg.FFN = 256, 512
			path := writeDemo(t, GenerateWeights(cfg), typ)
			var logits [2][]float32
			for i, noRepack := range []bool{true, false} {
				be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
				defer be.Close()
				m, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}, NoRepack: noRepack, smallPages: allSmall})
				if err != nil {
					t.Fatal(err)
				}
				if repacked := len(m.extra) == 1 && m.extra[0].Type().Name() == "CPU_REPACK"; repacked == noRepack {
					t.Errorf("NoRepack=%v: repacking buffer %v", noRepack, repacked)
				}
				logits[i] = evalAll(t, m, prompt)
				for _, id := range []int32{3, 17, 42} {
					logits[i] = append(logits[i], evalAll(t, m, []int32{id})...)
				}
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for j := range logits[0] {
				if math.Float32bits(logits[0][j]) != math.Float32bits(logits[1][j]) {
					t.Fatalf("logit %d: repacked %v, plain %v", j, logits[1][j], logits[0][j])
				}
			}
		})
	}
}
