package gguf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// The peer tests run Debian's python3-gguf (llama.cpp 0.7.0's gguf-py,
// the writer of most GGUF files in the wild) against this package: it
// reads files from our Writer, and writes files our reader must read.
// scripts/gguf-peer.sh fetches it; GOGML_GGUF_PEER names the directory
// holding the gguf Python package (default: where the script puts it).
// Without it the tests skip, saying so.

const defaultPeerDir = "/tmp/gogml-gguf-peer/root/usr/lib/python3/dist-packages"

func peerPython(t *testing.T) (string, string) {
	t.Helper()
	dir := os.Getenv("GOGML_GGUF_PEER")
	if dir == "" {
		dir = defaultPeerDir
	}
	if _, err := os.Stat(filepath.Join(dir, "gguf", "gguf_reader.py")); err != nil {
		t.Skipf("SKIP: python3-gguf not found in %s (run scripts/gguf-peer.sh, or set GOGML_GGUF_PEER): peer check not run", dir)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP: no python3: peer check not run")
	}
	// Prefer the system interpreter (Debian's numpy is installed for it).
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3"
	}
	if out, err := exec.Command(py, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("SKIP: python3 has no numpy (%s): peer check not run", bytes.TrimSpace(out))
	}
	return py, dir
}

const pyRead = `
import json, sys, hashlib
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
fields = []
for name, f in r.fields.items():
    if name.startswith('GGUF.'):
        continue
    nested = len(f.types) > 2
    v = None if nested else f.contents()
    def clean(x):
        if isinstance(x, list):
            return [clean(y) for y in x]
        if isinstance(x, float) and (x != x or x in (float('inf'), float('-inf'))):
            return repr(x)
        return x
    v = clean(v)
    fields.append({'key': name, 'types': [int(t) for t in f.types], 'value': v})
tensors = [{'name': t.name, 'type': int(t.tensor_type), 'shape': [int(x) for x in t.shape],
            'offset': int(t.data_offset), 'nbytes': int(t.n_bytes),
            'sha': hashlib.sha256(bytes(t.data.tobytes())).hexdigest()} for t in r.tensors]
json.dump({'alignment': int(r.alignment), 'data_offset': int(r.data_offset), 'fields': fields, 'tensors': tensors}, sys.stdout)
`

const pyWrite = `
import sys, numpy as np
from gguf import GGUFWriter, GGMLQuantizationType
w = GGUFWriter(sys.argv[1], 'llama')
w.add_custom_alignment(64)
w.add_uint8('p.u8', 250)
w.add_int16('p.i16', -12345)
w.add_int64('p.i64', -(1 << 50))
w.add_float64('p.f64', 2.5)
w.add_bool('p.bool', True)
w.add_string('p.str', 'zwölf ✓')
w.add_array('p.strs', ['<unk>', '<s>', '▁the'])
w.add_array('p.f32s', [0.5, -1.25])
w.add_array('p.i32s', [1, -2, 3])
w.add_tensor('t.f32', np.arange(6, dtype=np.float32).reshape(2, 3))
w.add_tensor('t.f16', np.array([1.5, -2, 0.25, 8], dtype=np.float16))
q = np.arange(34 * 2, dtype=np.uint8).reshape(2, 34)
w.add_tensor('t.q8_0', q, raw_dtype=GGMLQuantizationType.Q8_0)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
`

// TestPeerReadsOurFiles: python3-gguf reads a file of every value type,
// with tensors of several ggml types, as we meant it.
func TestPeerReadsOurFiles(t *testing.T) {
	py, dir := peerPython(t)
	// gguf-py's contents() flattens nested arrays; they are checked by
	// type list only (it parses them, which is the point).
	kvs := allValues(t)
	specs := []tensorSpec{
		{"w.f32", runtime.TypeF32, []int64{3, 2}},
		{"w.f16", runtime.TypeF16, []int64{8}},
		{"w.q8_0", runtime.TypeQ8_0, []int64{64, 3}},
		{"w.q4_k", runtime.TypeQ4_K, []int64{256, 2}},
	}
	file, datas := buildFile(t, 3, 0, kvs, specs)
	path := filepath.Join(t.TempDir(), "ours.gguf")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", pyRead, path)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3-gguf failed to read our file: %v\n%s", err, stderrOf(err))
	}
	var got struct {
		Alignment  uint64 `json:"alignment"`
		DataOffset uint64 `json:"data_offset"`
		Fields     []struct {
			Key   string `json:"key"`
			Types []int  `json:"types"`
			Value any    `json:"value"`
		} `json:"fields"`
		Tensors []struct {
			Name   string  `json:"name"`
			Type   int     `json:"type"`
			Shape  []int64 `json:"shape"`
			Offset uint64  `json:"offset"`
			NBytes uint64  `json:"nbytes"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.Alignment != f.Alignment || got.DataOffset != f.DataOffset {
		t.Errorf("peer: alignment %d data offset %d, ours %d %d", got.Alignment, got.DataOffset, f.Alignment, f.DataOffset)
	}
	if len(got.Fields) != len(kvs) {
		t.Fatalf("peer sees %d keys, we wrote %d", len(got.Fields), len(kvs))
	}
	for i, kv := range kvs {
		g := got.Fields[i]
		// gguf-py lists an empty array's type as [arr], without its
		// element type.
		elemOK := !kv.Value.IsArray() || (len(g.Types) > 1 && g.Types[1] == int(kv.Value.ElemType())) || (len(g.Types) == 1 && kv.Value.Len() == 0)
		if g.Key != kv.Key || len(g.Types) == 0 || g.Types[0] != int(kv.Value.Type()) || !elemOK {
			t.Errorf("key %d: peer %s %v, ours %s %s/%s", i, g.Key, g.Types, kv.Key, kv.Value.Type(), kv.Value.ElemType())
			continue
		}
		if kv.Value.ElemType() == TypeArray {
			continue
		}
		if want := jsonOf(t, kv.Value); !reflect.DeepEqual(g.Value, want) {
			t.Errorf("key %s: peer reads %v, we wrote %v", kv.Key, g.Value, want)
		}
	}
	for i, s := range specs {
		g := got.Tensors[i]
		ti := f.Tensors[i]
		if g.Name != s.name || g.Type != int(s.typ) || !reflect.DeepEqual(g.Shape, s.ne) ||
			g.Offset != f.DataOffset+ti.Offset || g.NBytes != uint64(len(datas[i])) {
			t.Errorf("tensor %d: peer %+v, ours %+v", i, g, ti)
		}
	}
}

// jsonOf is v as the peer script prints gguf-py's contents(): JSON
// numbers, strings and lists, non-finite floats as Python's repr.
func jsonOf(t *testing.T, v Value) any {
	if v.IsArray() {
		out := []any{}
		for i := 0; i < v.Len(); i++ {
			out = append(out, jsonOf(t, v.index(i)))
		}
		return out
	}
	if f, ok := v.Float(); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return map[bool]string{true: "nan", false: map[bool]string{true: "inf", false: "-inf"}[f > 0]}[math.IsNaN(f)]
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWeReadPeerFiles: a file written by python3-gguf's GGUFWriter, with a
// 64-byte alignment, string arrays, and f32, f16 and raw q8_0 tensors.
func TestWeReadPeerFiles(t *testing.T) {
	py, dir := peerPython(t)
	path := filepath.Join(t.TempDir(), "peer.gguf")
	cmd := exec.Command(py, "-c", pyWrite, path)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3-gguf failed to write: %v\n%s", err, out)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Alignment != 64 || m.DataOffset%64 != 0 {
		t.Errorf("alignment %d, data offset %d", m.Alignment, m.DataOffset)
	}
	want := map[string]string{
		"general.architecture": `"llama"`, "p.u8": "250", "p.i16": "-12345", "p.i64": fmt.Sprint(-(int64(1) << 50)),
		"p.f64": "2.5", "p.bool": "true", "p.str": `"zwölf ✓"`, "p.strs": `["<unk>", "<s>", "▁the"]`,
		"p.f32s": "[0.5, -1.25]", "p.i32s": "[1, -2, 3]",
	}
	for k, w := range want {
		v, ok := m.Get(k)
		if !ok || v.String() != w {
			t.Errorf("key %s = %s (%v), want %s", k, v, ok, w)
		}
	}
	f32 := make([]byte, 0, 24)
	for i := 0; i < 6; i++ {
		f32 = appendF32(f32, float32(i))
	}
	q8 := make([]byte, 68)
	for i := range q8 {
		q8[i] = byte(i)
	}
	for _, tc := range []struct {
		name string
		typ  runtime.Type
		ne   []int64
		data []byte
	}{
		{"t.f32", runtime.TypeF32, []int64{3, 2}, f32},
		{"t.f16", runtime.TypeF16, []int64{4}, []byte{0x00, 0x3e, 0x00, 0xc0, 0x00, 0x34, 0x00, 0x48}},
		{"t.q8_0", runtime.TypeQ8_0, []int64{32, 2}, q8},
	} {
		ti, ok := m.Tensor(tc.name)
		if !ok {
			t.Errorf("no tensor %s", tc.name)
			continue
		}
		d, err := m.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		if ti.Type != tc.typ || !reflect.DeepEqual(ti.Shape(), tc.ne) || !bytes.Equal(d, tc.data) {
			t.Errorf("tensor %s: %s %v % x, want %s %v % x", tc.name, ti.Type, ti.Shape(), d, tc.typ, tc.ne, tc.data)
		}
	}
}

func appendF32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
