package cpukernels

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// The files in testdata/ggml-quants are what ggml 0.27.0 (Debian's
// libggml-base.so.0.27.0 and libggml-cpu-haswell.so) writes for the input
// goldenInput builds: <type>.bin from ggml_quantize_chunk(type, x, dst, 0,
// 2, 512, NULL) for the quantize_chunk types, q8_1.bin and q8_K.bin from
// quantize_row_q8_1_ref and quantize_row_q8_K_ref, q8_0_cpu.bin and
// q8_1_cpu.bin from the CPU backend's (AVX2) quantize_row_q8_0 and
// quantize_row_q8_1, all on the 1024 values at once. dequant_fnv.txt holds
// the FNV-1a 64 hash of the float32 bytes ggml's to_float gives for each
// file. They were made by a throwaway C program linked against those
// libraries (run through the Debian sysroot's loader); the input generator
// below is that program's, line for line.

// goldenInput returns the generator's 1024 values: four super-blocks of
// 256 (uniform in [-1, 1); a bell-shaped sum of four uniforms times 3; tiny
// uniforms with a zero sub-block of 32 and an outlier; halves in [-30, 50]
// with every 32nd value ±127, where ggml's two q8_0 rounding rules differ).
func goldenInput() []float32 {
	st := uint32(0x9E3779B9)
	next := func() uint32 {
		st ^= st << 13
		st ^= st >> 17
		st ^= st << 5
		return st
	}
	uni := func() float32 { return float32(int32(next())) * (1.0 / 2147483648.0) }
	x := make([]float32, 1024)
	for i := 0; i < 256; i++ {
		x[i] = uni()
	}
	for i := 256; i < 512; i++ {
		s := uni()
		s += uni()
		s += uni()
		s += uni()
		x[i] = s * 3
	}
	for i := 512; i < 768; i++ {
		x[i] = uni() * (1.0 / 1048576.0)
	}
	for i := 544; i < 576; i++ {
		x[i] = 0
	}
	x[700] = 0.01
	for i := 768; i < 1024; i++ {
		x[i] = float32(int32(next()%161)-60) * 0.5
	}
	for i := 768; i < 1024; i += 32 {
		if (i/32)%2 == 1 {
			x[i] = 127
		} else {
			x[i] = -127
		}
	}
	return x
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ggml-quants", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenHashes(t *testing.T) map[string]uint64 {
	t.Helper()
	hs := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(readGolden(t, "dequant_fnv.txt")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		hs[f[0]] = v
	}
	return hs
}

func floatsHash(y []float32) uint64 {
	h := fnv.New64a()
	b := make([]byte, 4*len(y))
	for i, v := range y {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	h.Write(b)
	return h.Sum64()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestQuantizeMatchesGGML checks every quantizer byte for byte, and every
// dequantizer bit for bit, against ggml's own output.
func TestQuantizeMatchesGGML(t *testing.T) {
	x := goldenInput()
	hs := goldenHashes(t)
	tests := []struct {
		file  string
		typ   runtime.Type
		quant func([]float32, []byte) error
	}{
		{"q4_0", runtime.TypeQ4_0, nil},
		{"q4_1", runtime.TypeQ4_1, nil},
		{"q5_0", runtime.TypeQ5_0, nil},
		{"q5_1", runtime.TypeQ5_1, nil},
		{"q8_0", runtime.TypeQ8_0, nil},
		{"q8_1", runtime.TypeQ8_1, nil},
		{"q2_K", runtime.TypeQ2_K, nil},
		{"q3_K", runtime.TypeQ3_K, nil},
		{"q4_K", runtime.TypeQ4_K, nil},
		{"q5_K", runtime.TypeQ5_K, nil},
		{"q6_K", runtime.TypeQ6_K, nil},
		{"q8_K", runtime.TypeQ8_K, nil},
		{"q8_0_cpu", runtime.TypeQ8_0, QuantizeRowQ8_0CPU},
		{"q8_1_cpu", runtime.TypeQ8_1, QuantizeRowQ8_1CPU},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			want := readGolden(t, tc.file+".bin")
			got := make([]byte, tc.typ.RowSize(int64(len(x))))
			if tc.quant != nil {
				if err := tc.quant(x, got); err != nil {
					t.Fatal(err)
				}
			} else if n, err := Quantize(tc.typ, x, got, 2, int64(len(x)/2)); err != nil || n != uint64(len(got)) {
				t.Fatalf("Quantize: %d bytes, %v", n, err)
			}
			if !bytes.Equal(got, want) {
				i := firstDiff(got, want)
				bs := int(tc.typ.Size())
				t.Fatalf("%d bytes, want %d; first difference at byte %d (block %d, byte %d): %#02x, ggml %#02x",
					len(got), len(want), i, i/bs, i%bs, got[min(i, len(got)-1)], want[min(i, len(want)-1)])
			}
			h, ok := hs[tc.file]
			if !ok {
				return
			}
			y := make([]float32, len(x))
			if err := ToFloat(tc.typ, want, y); err != nil {
				t.Fatal(err)
			}
			if got := floatsHash(y); got != h {
				t.Errorf("dequantized hash %016x, ggml's %016x", got, h)
			}
		})
	}
}
