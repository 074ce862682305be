package cpukernels

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// The extra golden files in testdata/ggml-quants come from a second
// throwaway C program like the one quants_golden_test.go describes, linked
// against ggml 0.27.0's libggml-base.so and its zen4 CPU backend (the one
// test-backend-ops loads on this machine's CPU), on the same 1024 inputs
// x (goldenInput) as 2 rows of 512: <type>.bin from ggml_quantize_chunk
// (for the types ggml_quantize_requires_imatrix names, iq2_xxs, iq2_xs and
// iq1_s, with the importance matrix 1 + (j mod 7)/4 for column j, which
// shapes only their quantization, a step gogml does not take; NULL
// otherwise), <type>_cpu.bin
// from the CPU type traits' from_float where ggml has one,
// dequant_fnv_extra.txt the FNV-1a hash of to_float of <type>.bin, and
// vecdot.txt the CPU vec_dot of each weight row r of <type>.bin with row r
// of the activations act (x reversed) quantized by the vec_dot type's
// from_float (float32 bits in hex).

// extraTypes are the block types of quants_iq.go.
func extraTypes() []runtime.Type {
	return []runtime.Type{runtime.TypeIQ2_XXS, runtime.TypeIQ2_XS, runtime.TypeIQ2_S, runtime.TypeIQ3_XXS,
		runtime.TypeIQ3_S, runtime.TypeIQ1_S, runtime.TypeIQ1_M, runtime.TypeIQ4_NL, runtime.TypeIQ4_XS,
		runtime.TypeTQ1_0, runtime.TypeTQ2_0, runtime.TypeMXFP4, runtime.TypeNVFP4, runtime.TypeQ1_0, runtime.TypeQ2_0}
}

func readHexLines(t *testing.T, name string) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(readGolden(t, name)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

// TestExtraQuantsMatchGGML checks the dequantizers bit for bit and the
// quantizers byte for byte against ggml's output, and the MUL_MAT row
// products (dequantized weights times the activations rounded through the
// vec_dot type) against ggml's vec_dot.
func TestExtraQuantsMatchGGML(t *testing.T) {
	x := goldenInput()
	act := make([]float32, len(x))
	for i := range x {
		act[i] = x[len(x)-1-i]
	}
	hashes := readHexLines(t, "dequant_fnv_extra.txt")
	dots := readHexLines(t, "vecdot.txt")
	for _, typ := range extraTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			w := readGolden(t, typ.String()+".bin")
			if uint64(len(w)) != typ.RowSize(1024) {
				t.Fatalf("golden of %d bytes, want %d", len(w), typ.RowSize(1024))
			}
			y := make([]float32, len(x))
			if err := ToFloat(typ, w, y); err != nil {
				t.Fatal(err)
			}
			want, err := strconv.ParseUint(hashes[typ.String()][0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := floatsHash(y); got != want {
				t.Errorf("dequantized hash %016x, ggml's %016x", got, want)
			}
			if CanQuantize(typ) {
				got := make([]byte, len(w))
				if n, err := Quantize(typ, x, got, 2, 512); err != nil || n != uint64(len(w)) {
					t.Fatalf("Quantize: %d bytes, %v", n, err)
				}
				if i := firstDiff(got, w); i < len(w) {
					t.Errorf("Quantize: first difference at byte %d (block %d): %#02x, ggml %#02x", i, i/int(typ.Size()), got[i], w[i])
				}
				cpu := readGolden(t, typ.String()+"_cpu.bin")
				if err := FromFloatCPU(typ, x, got); err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, cpu); i < len(cpu) {
					t.Errorf("FromFloatCPU: first difference at byte %d (block %d): %#02x, ggml %#02x", i, i/int(typ.Size()), got[i], cpu[i])
				}
			} else if _, err := os.Stat(filepath.Join("testdata", "ggml-quants", typ.String()+"_cpu.bin")); err == nil {
				t.Error("ggml has a CPU quantizer, CanQuantize says false")
			} else if err := FromFloatCPU(typ, x, make([]byte, len(w))); !errors.Is(err, runtime.ErrUnsupported) {
				t.Errorf("FromFloatCPU: %v, want ErrUnsupported", err)
			}
			d := dots[typ.String()]
			if len(d) < 3 || !strings.EqualFold(d[0], VecDotType(typ).String()) {
				t.Fatalf("vecdot.txt has %q, VecDotType %s", d, VecDotType(typ))
			}
			a := append([]float32(nil), act...)
			if err := RoundActivations(typ, a); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 2; r++ {
				bits, err := strconv.ParseUint(d[1+r], 16, 32)
				if err != nil {
					t.Fatal(err)
				}
				ref := float64(math.Float32frombits(uint32(bits)))
				var s, mag float64
				for j := 512 * r; j < 512*(r+1); j++ {
					s += float64(y[j]) * float64(a[j])
					mag += math.Abs(float64(y[j]) * float64(a[j]))
				}
				if math.Abs(s-ref) > 1e-6*mag {
					t.Errorf("row %d: dot %g, ggml's vec_dot %g (Σ|w·a| %g)", r, s, ref, mag)
				}
			}
		})
	}
}
