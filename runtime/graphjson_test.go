package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodGraph = `{
  "format": "graph/v1",
  "buffer_types": [{"name": "host", "alignment": 32, "max_size": 0}],
  "buffers": [0],
  "tensors": [
    {"name": "w",  "type": "f32", "ne": [64, 64], "op": "NONE", "preallocated": true},
    {"name": "x",  "type": "f32", "ne": [64, 8],  "op": "NONE", "flags": ["input"]},
    {"name": "y",  "type": "f32", "ne": [64, 8],  "op": "MUL_MAT", "src": [0, 1]},
    {"name": "yv", "type": "f32", "ne": [64, 4],  "nb": [4, 256, 1024, 1024], "op": "VIEW", "src": [2], "view_src": 2, "view_offs": 1024},
    {"name": "z",  "type": "f32", "ne": [64, 4],  "op": "SCALE", "src": [3], "flags": ["output"]}
  ],
  "leafs": [0, 1],
  "nodes": [2, 3, 4],
  "leaf_buffer_ids": [0, 0],
  "node_buffer_ids": [0, 0, 0]
}`

func TestParseGood(t *testing.T) {
	f, err := ParseGraphFile([]byte(goodGraph))
	if err != nil {
		t.Fatal(err)
	}
	if f.Graph.NumNodes() != 3 || f.Graph.NumLeafs() != 2 {
		t.Fatalf("nodes %d leafs %d", f.Graph.NumNodes(), f.Graph.NumLeafs())
	}
	yv := f.Tensors[3]
	if yv.ViewSrc != f.Tensors[2] || yv.ViewOffs != 1024 || yv.NBytes() != 1024 {
		t.Fatalf("view decoded wrong: %+v", yv)
	}
	// Round trip: write, parse, write again gives the same bytes.
	var a, b bytes.Buffer
	if err := WriteGraphFile(&a, f); err != nil {
		t.Fatal(err)
	}
	f2, err := ParseGraphFile(a.Bytes())
	if err != nil {
		t.Fatalf("reparse: %v\n%s", err, a.String())
	}
	if err := WriteGraphFile(&b, f2); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("writer not deterministic:\n%s\n---\n%s", a.String(), b.String())
	}
}

// edit replaces one substring of the good graph.
func edit(old, new string) string {
	if !strings.Contains(goodGraph, old) {
		panic("test edit: " + old)
	}
	return strings.Replace(goodGraph, old, new, 1)
}

func TestParseBadInput(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
		text  string
	}{
		{"malformed json", `{"format": "graph/v1", `, ErrFormat, "unexpected EOF"},
		{"not an object", `[1,2]`, ErrFormat, ""},
		{"trailing data", goodGraph + "{}", ErrFormat, "trailing"},
		{"wrong format", edit(`"graph/v1"`, `"graph/v2"`), ErrFormat, "format"},
		{"unknown top key", edit(`"buffers": [0],`, `"buffers": [0], "bogus": 1,`), ErrFormat, "bogus"},
		{"unknown tensor key", edit(`"name": "w", `, `"name": "w", "color": "red", `), ErrFormat, "color"},
		{"upper-case key", edit(`"ne": [64, 8],  "op": "NONE"`, `"NE": [64, 8],  "op": "NONE"`), ErrFormat, `"NE"`},
		{"mixed-case top key", edit(`"buffers": [0],`, `"Buffers": [0],`), ErrFormat, `"Buffers"`},
		{"duplicate tensor key", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [64, 8], "ne": [64, 9], "op": "NONE"`), ErrFormat, "twice"},
		{"duplicate key, other case", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [64, 8], "NE": [64, 9], "op": "NONE"`), ErrFormat, `"NE"`},
		{"duplicate top key", edit(`"buffers": [0],`, `"buffers": [0], "buffers": [0],`), ErrFormat, "twice"},
		{"duplicate buffer type key", edit(`"alignment": 32`, `"alignment": 32, "alignment": 64`), ErrFormat, "buffer_types[0]"},
		{"unknown type", edit(`"type": "f32", "ne": [64, 64]`, `"type": "f33", "ne": [64, 64]`), ErrUnknownType, "f33"},
		{"upper-case type", edit(`"type": "f32", "ne": [64, 64]`, `"type": "F32", "ne": [64, 64]`), ErrUnknownType, "F32"},
		{"unknown op", edit(`"op": "MUL_MAT"`, `"op": "MATMUL"`), ErrUnknownOp, "MATMUL"},
		{"unknown flag", edit(`["input"]`, `["inptu"]`), ErrFormat, "inptu"},
		{"ne zero", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [0, 8],  "op": "NONE"`), ErrShape, "ne[0] = 0"},
		{"ne negative", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [64, -8],  "op": "NONE"`), ErrShape, "ne[1] = -8"},
		{"too many dims", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [64, 8, 1, 1, 1],  "op": "NONE"`), ErrShape, "5 values"},
		{"no dims", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [],  "op": "NONE"`), ErrShape, "0 values"},
		{"ne overflows", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [4294967296, 4294967296],  "op": "NONE"`), ErrOverflow, ""},
		{"ne beyond int64", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [99999999999999999999],  "op": "NONE"`), ErrFormat, ""},
		{"bytes overflow", edit(`"ne": [64, 8],  "op": "NONE"`, `"ne": [2305843009213693952, 2],  "op": "NONE"`), ErrOverflow, ""},
		{"nb overflow", edit(`"nb": [4, 256, 1024, 1024]`, `"nb": [4, 9223372036854775807, 1024, 1024]`), ErrOverflow, ""},
		{"block size", edit(`"type": "f32", "ne": [64, 8],  "op": "NONE"`, `"type": "q4_0", "ne": [33, 8],  "op": "NONE"`), ErrShape, "block size"},
		{"cycle", edit(`"src": [0, 1]`, `"src": [0, 4]`), ErrGraph, ""},
		{"self source", edit(`"src": [0, 1]`, `"src": [0, 2]`), ErrGraph, "cycle"},
		{"source later in node order", edit(`"nodes": [2, 3, 4]`, `"nodes": [3, 2, 4]`), ErrGraph, "not computed before"},
		{"src out of range", edit(`"src": [0, 1]`, `"src": [0, 17]`), ErrGraph, "17"},
		{"too many sources", edit(`"src": [0, 1]`, `"src": [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]`), ErrGraph, "11 sources"},
		{"view outside base", edit(`"view_offs": 1024`, `"view_offs": 1028`), ErrView, "outside"},
		{"view of a view", edit(`"flags": ["output"]}`, `"flags": ["output"]},
    {"name": "vv", "type": "f32", "ne": [4], "op": "VIEW", "src": [3], "view_src": 3, "view_offs": 0}`), ErrView, "itself a view"},
		{"view without offset", edit(`, "view_offs": 1024`, ``), ErrView, "together"},
		{"negative view offset", edit(`"view_offs": 1024`, `"view_offs": -4`), ErrView, "negative"},
		{"view disagrees on preallocated", edit(`"view_offs": 1024}`, `"view_offs": 1024, "preallocated": true}`), ErrView, "preallocated"},
		{"alignment not power of two", edit(`"alignment": 32`, `"alignment": 24`), ErrAlignment, "24"},
		{"alignment zero", edit(`"alignment": 32`, `"alignment": 0`), ErrAlignment, ""},
		{"negative max size", edit(`"max_size": 0`, `"max_size": -1`), ErrFormat, "max_size"},
		{"bad alloc_pad", edit(`"max_size": 0}`, `"max_size": 0, "alloc_pad": 0}`), ErrFormat, "alloc_pad"},
		{"buffer type out of range", edit(`"buffers": [0]`, `"buffers": [1]`), ErrFormat, "buffers[0]"},
		{"leaf id out of range", edit(`"leafs": [0, 1]`, `"leafs": [0, 9]`), ErrFormat, "leafs[1]"},
		{"node buffer id out of range", edit(`"node_buffer_ids": [0, 0, 0]`, `"node_buffer_ids": [0, 3, 0]`), ErrFormat, "node_buffer_ids[1]"},
		{"leaf buffer id out of range", edit(`"leaf_buffer_ids": [0, 0]`, `"leaf_buffer_ids": [0, -1]`), ErrFormat, "leaf_buffer_ids[1]"},
		{"node buffer ids length", edit(`"node_buffer_ids": [0, 0, 0]`, `"node_buffer_ids": [0, 0]`), ErrFormat, "want 3"},
		{"duplicate node", edit(`"nodes": [2, 3, 4]`, `"nodes": [2, 3, 4, 4]`), ErrGraph, "twice"},
		{"leaf also node", edit(`"leafs": [0, 1]`, `"leafs": [0, 1, 2]`), ErrGraph, "both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGraphFile([]byte(tc.input))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %q does not wrap %v", err, tc.want)
			}
			if tc.text != "" && !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %q does not mention %q", err, tc.text)
			}
		})
	}
}

// FuzzParseGraphFile: the loader never panics, and what it accepts it can
// write and read back.
func FuzzParseGraphFile(f *testing.F) {
	f.Add([]byte(goodGraph))
	f.Add([]byte(`{"format":"graph/v1","buffer_types":[{"name":"a","alignment":1,"max_size":5}],"tensors":[],"leafs":[],"nodes":[]}`))
	for _, dir := range []string{"../../shared/conformance", "../shared/conformance"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "random-0*.graph.json"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGraphFile(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteGraphFile(&out, g); err != nil {
			t.Fatalf("write accepted graph: %v", err)
		}
		if _, err := ParseGraphFile(out.Bytes()); err != nil {
			t.Fatalf("reparse written graph: %v\n%s", err, out.String())
		}
	})
}

func ExampleParseGraphFile() {
	f, err := ParseGraphFile([]byte(goodGraph))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range f.Graph.Nodes() {
		fmt.Println(n.Name, n.Op, n.Ne[:n.NDims()], n.NBytes())
	}
	// Output:
	// y MUL_MAT [64 8] 2048
	// yv VIEW [64 4] 1024
	// z SCALE [64 4] 1024
}

// zeros is an endless reader, as /dev/zero.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestReadGraphFileCapped: an endless input is an error after the cap
// (MaxGraphFileSize for ReadGraphFile), not a read until memory runs out.
func TestReadGraphFileCapped(t *testing.T) {
	z := &zeros{}
	const limit = 1 << 20
	if _, err := readCapped(z, limit); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v, want a size error", err)
	}
	if z.n > 2*limit {
		t.Fatalf("read %d bytes, cap %d", z.n, limit)
	}
	if data, err := readCapped(strings.NewReader("{}"), limit); err != nil || string(data) != "{}" {
		t.Fatalf("small input: %q %v", data, err)
	}
}
