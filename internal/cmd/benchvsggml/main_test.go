package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func TestParseOpEnum(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "ggml.h")
	src := "enum ggml_type { GGML_TYPE_F32 = 0 };\n    enum ggml_op {\n        GGML_OP_NONE = 0,\n\n        GGML_OP_DUP,\n        GGML_OP_MUL_MAT, // a comment\n        GGML_OP_COUNT_EQUAL,\n        GGML_OP_COUNT,\n    };\n"
	if err := os.WriteFile(h, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ops, err := parseOpEnum(h)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"NONE": 0, "DUP": 1, "MUL_MAT": 2, "COUNT_EQUAL": 3} {
		if got, ok := ops[name]; !ok || got != want {
			t.Errorf("%s = %d, %v; want %d", name, got, ok, want)
		}
	}
	if _, ok := ops["COUNT"]; ok {
		t.Error("GGML_OP_COUNT counted as an op")
	}
	if err := os.WriteFile(h, []byte("nothing"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseOpEnum(h); err == nil {
		t.Error("a header without enum ggml_op parsed")
	}
}

func TestCaseLines(t *testing.T) {
	ops := map[string]int{"MUL_MAT": 29, "SOFT_MAX": 46, "RMS_NORM": 25, "ROPE": 48, "GET_ROWS": 40, "CPY": 34, "GLU": 99, "FLASH_ATTN_EXT": 70}
	for _, c := range benchCases(4096, []int64{32, 512}) {
		line, err := c.ggml.line(ops, c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.HasSuffix(line, " "+c.name) {
			t.Errorf("%s: line %q does not end with the name", c.name, line)
		}
	}
	mm := ggmlOp{op: "MUL_MAT", typ: runtime.TypeF32, ne: [4]int64{4096, 1, 1, 1},
		srcTypes: []runtime.Type{runtime.TypeQ4_0, runtime.TypeF32}, srcNe: [][4]int64{{4096, 4096, 1, 1}, {4096, 1, 1, 1}}}
	got, err := mm.line(ops, "x")
	want := "29 0 4096 1 1 1 0 2 2 4096 4096 1 1 18 2304 9437184 9437184 0 4096 1 1 1 4 16384 16384 16384 x"
	if err != nil || got != want {
		t.Errorf("line = %q, %v; want %q", got, err, want)
	}
	if _, err := (ggmlOp{op: "NOPE"}).line(ops, "x"); err == nil {
		t.Error("an op missing from the header gave a line")
	}
}

// TestCaseShapes builds each case's gogml graph: it must build, and its
// result must have the type and shape of the ggml line.
func TestCaseShapes(t *testing.T) {
	for _, c := range append(benchCases(4096, []int64{32, 512}), bigPromptCases(512)...) {
		ctx := runtime.NewContext()
		out := c.build(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out.Type != c.ggml.typ || out.Ne != c.ggml.ne {
			t.Errorf("%s: gogml %s %v, ggml line %s %v", c.name, out.Type, out.Ne, c.ggml.typ, c.ggml.ne)
		}
	}
}

func TestPerfLine(t *testing.T) {
	line := "  MUL_MAT(name=mm_q4_0_n1,type=f32,ne=[4096,1,1,1],op_params=[],sources=q4_0[4096,4096,1,1],f32[4096,1,1,1]):                    908 runs -  4140.26 us/run -     9248 kB/run - \x1b[1;34m   2.13 GB/s\x1b[0m"
	m := perfRE.FindStringSubmatch(ansiRE.ReplaceAllString(line, ""))
	if m == nil || m[1] != "mm_q4_0_n1" || m[3] != "4140.26" {
		t.Fatalf("parsed %q", m)
	}
}

// TestCaseNamesUnique: decode, every prompt batch and the n=512 rows at
// ggml's own perf shape give MUL_MAT (and FLASH_ATTN_EXT) rows of their
// own, each named once (ggml's answers are matched by name).
func TestCaseNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	mm512 := 0
	for _, c := range append(benchCases(4096, []int64{32, 512}), bigPromptCases(512)...) {
		if seen[c.name] {
			t.Errorf("case %s twice", c.name)
		}
		seen[c.name] = true
		if c.op == "MUL_MAT" && c.ggml.ne[1] == 512 {
			mm512++
		}
	}
	for _, name := range []string{"mm_q4_0_n1", "mm_q4_0_n32", "mm_q4_0_n512", "mm_q6_k_n512", "fa_n1_kv4096", "fa_n32_kv512", "fa_n512_kv512", "mm_q4_0_n512_k14336", "mm_q6_k_n512_k14336", "mm_q4_0_n1_m32768", "mm_q8_0_n1_m32768", "mm_q4_k_n1_m32768"} {
		if !seen[name] {
			t.Errorf("no case %s", name)
		}
	}
	if mm512 != 9+6 {
		t.Errorf("%d MUL_MAT cases with 512 rows, want 9 k×k and 6 at ggml's perf shape", mm512)
	}
}

// TestBuiltinLine: a perf line of ggml's own MUL_MAT case parses, and its
// parameters start with the case's builtin prefix (ggml spells q4_K).
func TestBuiltinLine(t *testing.T) {
	line := "  MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=512,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0,m_v=0,pad=0):                        1 runs - 9187678.00 us/run -  60.13 GFLOP/run - \x1b[1;34m  6.54 GFLOPS\x1b[0m"
	m := builtinRE.FindStringSubmatch(ansiRE.ReplaceAllString(line, ""))
	if m == nil || m[1] != "MUL_MAT" || m[4] != "9187678.00" {
		t.Fatalf("parsed %q", m)
	}
	prefixes := map[string]string{}
	for _, c := range bigPromptCases(512) {
		prefixes[c.name] = c.builtin
	}
	if !strings.HasPrefix(m[2], prefixes["mm_q4_0_n512_k14336"]) {
		t.Errorf("params %q do not start with %q", m[2], prefixes["mm_q4_0_n512_k14336"])
	}
	if p := prefixes["mm_q4_k_n512_k14336"]; !strings.HasPrefix(p, "type_a=q4_K,") {
		t.Errorf("q4_k case asks ggml for %q", p)
	}
}
