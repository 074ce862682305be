package gguf

import (
	"bytes"
	"os"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// FuzzParse feeds arbitrary bytes to Parse: it must return an error or a
// File whose every tensor lies inside the input; a parsed file written
// again by Writer (when its tensors are laid out as ggml lays them) must
// parse to the same metadata and tensors.
func FuzzParse(f *testing.F) {
	if golden, err := os.ReadFile("testdata/tiny.gguf.bin"); err == nil {
		f.Add(golden)
	}
	file, _ := buildFile(f, 2, 64, allValues(f)[:4], []tensorSpec{{"a", runtime.TypeQ4_0, []int64{32, 2}}})
	f.Add(file)
	f.Add(header(3, 1, 0).tinfo("a", []uint64{4}, 0, 0).pad(32).raw(make([]byte, 16)...).b)
	f.Add(deepArray(3))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := Parse(data)
		if err != nil {
			return
		}
		w := NewWriter()
		if err := w.SetVersion(pf.Version); err != nil {
			t.Fatal(err)
		}
		for _, kv := range pf.KV {
			if err := w.Set(kv.Key, kv.Value); err != nil {
				t.Fatalf("key %q from a parsed file: %v", kv.Key, err)
			}
		}
		sequential := true
		for _, ti := range pf.Tensors {
			start := pf.DataOffset + ti.Offset
			if start > uint64(len(data)) || ti.NBytes() > uint64(len(data))-start {
				t.Fatalf("tensor %q outside the input", ti.Name)
			}
			if err := w.AddTensor(ti.Name, ti.Type, ti.Shape(), data[start:start+ti.NBytes()]); err != nil {
				t.Fatalf("tensor %q from a parsed file: %v", ti.Name, err)
			}
			if w.tensors[len(w.tensors)-1].Offset != ti.Offset {
				sequential = false
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		// Values are compared through their encoding (NaN != NaN).
		if len(again.KV) != len(pf.KV) || len(again.Tensors) != len(pf.Tensors) {
			t.Fatal("rewritten file has other counts")
		}
		for i, kv := range pf.KV {
			g := again.KV[i]
			if g.Key != kv.Key || g.Value.Type() != kv.Value.Type() || g.Value.ElemType() != kv.Value.ElemType() || g.Value.Len() != kv.Value.Len() {
				t.Fatalf("key %d: %q %s, rewritten %q %s", i, kv.Key, kv.Value.Type(), g.Key, g.Value.Type())
			}
		}
		for i, ti := range pf.Tensors {
			g := again.Tensors[i]
			if g.Name != ti.Name || g.Type != ti.Type || g.Ne != ti.Ne || (sequential && g.Offset != ti.Offset) {
				t.Fatalf("tensor %d: %+v, rewritten %+v", i, ti, g)
			}
		}
	})
}
