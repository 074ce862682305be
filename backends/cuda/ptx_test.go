package cuda

import (
	"bufio"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	kcuda "github.com/gogml/gogml/internal/kernels/cuda"
	"github.com/gogml/gogml/runtime"
)

// ptxParam is one parameter of a PTX .entry: its size and alignment in
// bytes and its PTX type.
type ptxParam struct {
	typ   string // ".u64", ".u32", ".f32", ".b8" ...
	size  int
	align int
}

var (
	entryRe  = regexp.MustCompile(`^\.visible \.entry (\w+)\($`)
	scalarRe = regexp.MustCompile(`^\.param (\.[usbf](?:8|16|32|64)) \w+,?$`)
	arrayRe  = regexp.MustCompile(`^\.param \.align (\d+) \.b8 \w+\[(\d+)\],?$`)
)

// parsePTXEntries reads every .entry and its parameter list from PTX text.
func parsePTXEntries(text string) (map[string][]ptxParam, error) {
	out := map[string][]ptxParam{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur string
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := entryRe.FindStringSubmatch(line); m != nil {
			cur, in = m[1], true
			out[cur] = []ptxParam{}
			continue
		}
		if !in {
			continue
		}
		if line == ")" {
			in = false
			continue
		}
		if m := scalarRe.FindStringSubmatch(line); m != nil {
			bits, _ := strconv.Atoi(m[1][2:])
			out[cur] = append(out[cur], ptxParam{typ: m[1], size: bits / 8, align: bits / 8})
			continue
		}
		if m := arrayRe.FindStringSubmatch(line); m != nil {
			al, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			out[cur] = append(out[cur], ptxParam{typ: ".b8", size: n, align: al})
			continue
		}
		return nil, fmt.Errorf("entry %s: unrecognised parameter line %q", cur, line)
	}
	return out, sc.Err()
}

// compatible reports whether a PTX parameter has the width, alignment and
// class of Go-side kind k.
func compatible(p ptxParam, k argKind) bool {
	if p.size != k.size() || p.align != k.align() {
		return false
	}
	switch k {
	case argPtr, argI64:
		return p.typ == ".u64" || p.typ == ".s64" || p.typ == ".b64"
	case argI32:
		return p.typ == ".u32" || p.typ == ".s32" || p.typ == ".b32"
	case argF32:
		return p.typ == ".f32"
	case argShape:
		return p.typ == ".b8"
	}
	return false
}

func loadAllPTX(t *testing.T) map[string]map[string][]ptxParam {
	t.Helper()
	mods := map[string]map[string][]ptxParam{}
	files, err := fs.Glob(kcuda.PTX, "*.ptx")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded PTX: %v", err)
	}
	for _, f := range files {
		b, err := kcuda.PTX.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := parsePTXEntries(string(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		mods[strings.TrimSuffix(f, ".ptx")] = entries
	}
	return mods
}

// TestKernelParamsMatchPTX checks every Go kernel descriptor against the
// parameter list nvcc generated for it: same count, and each parameter of
// the same width, alignment and class, in order. It also checks that the
// packer puts each argument where the PTX layout expects it.
func TestKernelParamsMatchPTX(t *testing.T) {
	mods := loadAllPTX(t)
	seen := map[string]bool{}
	for _, k := range allKernels {
		t.Run(k.name, func(t *testing.T) {
			entries, ok := mods[k.module]
			if !ok {
				t.Fatalf("module %s.ptx missing", k.module)
			}
			params, ok := entries[k.name]
			if !ok {
				t.Fatalf("%s.ptx has no entry %s", k.module, k.name)
			}
			seen[k.module+"/"+k.name] = true
			if len(params) != len(k.args) {
				t.Fatalf("PTX has %d parameters, descriptor %d", len(params), len(k.args))
			}
			var a args
			off := 0
			for i, p := range params {
				if !compatible(p, k.args[i]) {
					t.Errorf("parameter %d: PTX %s (size %d, align %d), descriptor %s", i, p.typ, p.size, p.align, k.args[i])
				}
				off = (off + p.align - 1) &^ (p.align - 1)
				before := len(a.buf)
				switch k.args[i] {
				case argPtr:
					a.ptr(1)
				case argShape:
					a.shape(&runtime.Tensor{})
				case argI32:
					a.i32(1)
				case argF32:
					a.f32(1)
				case argI64:
					a.i64(1)
				}
				if got := len(a.buf) - k.args[i].size(); got != off {
					t.Errorf("parameter %d packed at %d (buffer was %d), PTX layout %d", i, got, before, off)
				}
				off += p.size
			}
			if err := a.check(k); err != nil {
				t.Error(err)
			}
		})
	}
	// Every PTX entry should have a descriptor, so none is launched blind.
	for mod, entries := range mods {
		for name := range entries {
			if !seen[mod+"/"+name] {
				t.Errorf("%s.ptx entry %s has no Go descriptor", mod, name)
			}
		}
	}
}

// TestPTXTarget checks that the embedded PTX targets ISA 7.x and an sm_70
// or sm_80 virtual architecture, so that 2022-and-later drivers load it.
func TestPTXTarget(t *testing.T) {
	files, _ := fs.Glob(kcuda.PTX, "*.ptx")
	for _, f := range files {
		b, _ := kcuda.PTX.ReadFile(f)
		s := string(b)
		if !regexp.MustCompile(`(?m)^\.version 7\.\d+$`).MatchString(s) {
			t.Errorf("%s: not PTX ISA 7.x", f)
		}
		if !regexp.MustCompile(`(?m)^\.target sm_(70|80)$`).MatchString(s) {
			t.Errorf("%s: target is not sm_70 or sm_80", f)
		}
		if !strings.Contains(s, ".address_size 64") {
			t.Errorf("%s: not 64-bit addressing", f)
		}
	}
}

func TestArgsCheck(t *testing.T) {
	tests := []struct {
		name string
		pack func(a *args)
		ok   bool
	}{
		{"exact", func(a *args) { a.ptr(0).i64(4).f32(1) }, true},
		{"missing", func(a *args) { a.ptr(0).i64(4) }, false},
		{"wrong kind", func(a *args) { a.ptr(0).i32(4).f32(1) }, false},
		{"extra", func(a *args) { a.ptr(0).i64(4).f32(1).f32(2) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a args
			tc.pack(&a)
			if err := a.check(&kFill); (err == nil) != tc.ok {
				t.Fatalf("check = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// FuzzParsePTXEntries checks that the PTX parameter parser never panics.
func FuzzParsePTXEntries(f *testing.F) {
	f.Add(".visible .entry k(\n.param .u64 k_param_0,\n.param .align 8 .b8 k_param_1[64]\n)\n")
	f.Add(".visible .entry k(\n)\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parsePTXEntries(s)
	})
}
