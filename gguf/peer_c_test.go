package gguf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// peerRoot is a sysroot holding Debian's libggml0 and libggml-dev
// (ggml 0.27.0): GOGML_PEER_ROOT, where scripts/ggml-peer.sh unpacks it
// (make test sets it). The C peer tests skip without it.
func peerRoot(t *testing.T) (root, loader, libs string) {
	t.Helper()
	root = os.Getenv("GOGML_PEER_ROOT")
	if root == "" {
		t.Skip("SKIP: GOGML_PEER_ROOT (the ggml peer sysroot, `bash scripts/ggml-peer.sh path`; make test sets it) not set")
	}
	libs = filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	loader = filepath.Join(libs, "ld-linux-x86-64.so.2")
	for _, p := range []string{loader, filepath.Join(libs, "libggml-base.so"), filepath.Join(root, "usr/include/gguf.h")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("SKIP: ggml peer sysroot not found (%s missing; set GOGML_PEER_ROOT): C peer check not run", p)
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("SKIP: no gcc: C peer check not run")
	}
	return root, loader, libs
}

// buildGGUFCheck compiles testdata/ggufcheck.c against the peer's
// libggml-base (linked against the sysroot's newer glibc, so undefined
// symbols in the shared libraries are allowed; it runs under the
// sysroot's loader).
func buildGGUFCheck(t *testing.T) func(args ...string) (string, error) {
	root, loader, libs := peerRoot(t)
	bin := filepath.Join(t.TempDir(), "ggufcheck")
	cmd := exec.Command("gcc", "-o", bin, "testdata/ggufcheck.c", "-I"+filepath.Join(root, "usr/include"),
		"-L"+libs, "-lggml-base", "-lggml", "-Wl,--allow-shlib-undefined")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return func(args ...string) (string, error) {
		out, err := exec.Command(loader, append([]string{"--library-path", libs, bin}, args...)...).CombinedOutput()
		return string(out), err
	}
}

// TestGGMLReadsOurFiles: ggml 0.27.0's gguf_init_from_file accepts our
// files (every value type but nested arrays, tensors of several types, v2
// and v3, two alignments) and, writing the metadata back with
// gguf_write_to_file, produces the very same bytes up to the data section.
func TestGGMLReadsOurFiles(t *testing.T) {
	run := buildGGUFCheck(t)
	var kvs []KV
	for _, kv := range allValues(t) {
		if kv.Value.ElemType() != TypeArray {
			kvs = append(kvs, kv)
		}
	}
	specs := []tensorSpec{
		{"w.f32", runtime.TypeF32, []int64{3, 2}},
		{"w.f16", runtime.TypeF16, []int64{8, 1, 2}},
		{"w.q8_0", runtime.TypeQ8_0, []int64{64, 3}},
		{"w.q4_0", runtime.TypeQ4_0, []int64{32, 1, 1, 2}},
		{"w.q6_k", runtime.TypeQ6_K, []int64{256, 2}},
		{"w.bf16", runtime.TypeBF16, []int64{5}},
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		version uint32
		align   uint32
		specs   []tensorSpec
	}{{"v3", 3, 0, specs}, {"v2-align64", 2, 64, specs}, {"no-tensors", 3, 0, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			file, _ := buildFile(t, tc.version, tc.align, kvs, tc.specs)
			in, back := filepath.Join(dir, tc.name+".gguf"), filepath.Join(dir, tc.name+".back.gguf")
			if err := os.WriteFile(in, file, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run(in, back)
			if err != nil {
				t.Fatalf("ggml rejected our file: %v\n%s", err, out)
			}
			f, err := Parse(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range f.Tensors {
				// ggml spells the k-quants q6_K; runtime says q6_k.
				line := fmt.Sprintf("tensor %s %s %d %d %d,%d,%d,%d\n", ti.Name, ti.Type, ti.Offset, ti.NBytes(), ti.Ne[0], ti.Ne[1], ti.Ne[2], ti.Ne[3])
				if !strings.Contains(strings.ToLower(out), strings.ToLower(line)) {
					t.Errorf("ggml does not list %q:\n%s", line, out)
				}
			}
			got, err := os.ReadFile(back)
			if err != nil {
				t.Fatal(err)
			}
			if meta := file[:runtime.AlignUp(f.DataOffset, f.Alignment)]; !bytes.Equal(got, meta) {
				t.Errorf("ggml writes the metadata back as %d bytes that differ from our %d", len(got), len(meta))
			}
		})
	}
	// ggml rejects nested arrays (GGUF allows them): ours stay readable by
	// gguf-py and by this package, and ggml says why it refuses.
	file, _ := buildFile(t, 3, 0, allValues(t), nil)
	in := filepath.Join(dir, "nested.gguf")
	if err := os.WriteFile(in, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(in); err == nil || !strings.Contains(out, "invalid GGUF type 9") {
		t.Errorf("ggml on a nested array: %v\n%s", err, out)
	}
}
