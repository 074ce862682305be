package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGGUFCommands: write-demo writes the built-in weights, info describes
// the file, and run -model on it prints the same generated ids and
// checksum as the built-in model with the same seed.
func TestGGUFCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.gguf")
	var out, errb bytes.Buffer
	if err := runGGUF([]string{"write-demo", path, "-type", "f32", "-seed", "3"}, &out, &errb); err != nil {
		t.Fatalf("write-demo: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "21 tensors") {
		t.Errorf("write-demo says:\n%s", out.String())
	}
	out.Reset()
	if err := runGGUF([]string{"info", path}, &out, &errb); err != nil {
		t.Fatalf("info: %v", err)
	}
	for _, want := range []string{"GGUF v3", "general.architecture", `"llama"`, "tokenizer.ggml.tokens", "arr[str,256]",
		"blk.1.ffn_down.weight", "[352 128]", "sizes by type:", "f32", "gogml run: can run it: llama decoder as llama, vocab 256"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("info lacks %q:\n%s", want, out.String())
		}
	}
	builtin := runOut(t, "-prompt", "1,2,3", "-n", "5", "-q", "-weight-seed", "3")
	fromFile := runOut(t, "-model", path, "-prompt-ids", "1,2,3", "-n", "5", "-q")
	for _, re := range []string{`generated: .*`, `logits checksum: .*`} {
		a, b := findLine(builtin, re), findLine(fromFile, re)
		if a == "" || a != b {
			t.Errorf("built-in %q, from the file %q", a, b)
		}
	}
	// -text goes through the file's vocabulary (" hi" as byte tokens).
	if got := runOut(t, "-model", path, "-text", "hi", "-n", "2", "-q"); !strings.Contains(got, "prompt ids: [1 229 153 132 107 108]") ||
		!strings.Contains(got, `text: " hi" + `) {
		t.Errorf("run -text:\n%s", got)
	}
	// A file gogml cannot run: info says why, run fails naming it.
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00"+strings.Repeat("\x00", 16)), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runGGUF([]string{"info", bad}, &out, &errb); err != nil || !strings.Contains(out.String(), "cannot run this file") {
		t.Errorf("info on an empty file: %v\n%s", err, out.String())
	}
	if err := runRun([]string{"-model", bad, "-q"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "general.architecture") {
		t.Errorf("run on an empty file: %v", err)
	}
	// A k-quant grows the demo to whole 256-element rows unless told a
	// shape; a told shape that does not fit is an error.
	kq := filepath.Join(dir, "q4k.gguf")
	out.Reset()
	if err := runGGUF([]string{"write-demo", kq, "-type", "q4_K"}, &out, &errb); err != nil || !strings.Contains(out.String(), "dim 256") ||
		!strings.Contains(out.String(), "ffn 512") {
		t.Errorf("write-demo -type q4_K: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := runGGUF([]string{"info", kq}, &out, &errb); err != nil || !strings.Contains(out.String(), "can run it") || !strings.Contains(out.String(), "weights q4_k") {
		t.Errorf("info on a q4_K file: %v\n%s", err, out.String())
	}
	for _, args := range [][]string{{}, {"nope"}, {"info"}, {"write-demo", path, "-type", "q9"}, {"info", path, "extra"},
		{"write-demo", kq, "-type", "q6_k", "-dim", "128"}} {
		if err := runGGUF(args, &out, &errb); err == nil {
			t.Errorf("gguf %v succeeded", args)
		}
	}
}

func findLine(s, re string) string {
	return regexp.MustCompile(re).FindString(s)
}
