package rpcwire

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// peerHeader is ggml 0.27.0's ggml.h from the peer sysroot
// (GOGML_PEER_ROOT, set by make test), or "".
func peerHeader() string {
	if root := os.Getenv("GOGML_PEER_ROOT"); root != "" {
		return filepath.Join(root, "usr/include/ggml.h")
	}
	return ""
}

// enumEntry is one enumerator: kind (type, op, unary, glu), name, value.
type enumEntry struct {
	kind, name string
	value      int
}

// committedEnums reads testdata/ggml-0.27.0-enums.txt.
func committedEnums(t *testing.T) []enumEntry {
	t.Helper()
	f, err := os.Open("testdata/ggml-0.27.0-enums.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []enumEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 3 {
			t.Fatalf("bad line %q", line)
		}
		v, err := strconv.Atoi(fs[2])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, enumEntry{fs[0], fs[1], v})
	}
	return out
}

// headerEnums parses the four enums out of ggml.h.
func headerEnums(t *testing.T, src string) []enumEntry {
	t.Helper()
	var out []enumEntry
	for _, e := range []struct{ kind, enum, prefix string }{
		{"type", "ggml_type", "GGML_TYPE_"}, {"op", "ggml_op", "GGML_OP_"},
		{"unary", "ggml_unary_op", "GGML_UNARY_OP_"}, {"glu", "ggml_glu_op", "GGML_GLU_OP_"},
	} {
		start := strings.Index(src, "enum "+e.enum+" {")
		if start < 0 {
			t.Fatalf("enum %s not in header", e.enum)
		}
		body := src[start:]
		body = body[:strings.Index(body, "};")]
		re := regexp.MustCompile(`(?m)^\s*` + e.prefix + `([A-Z0-9_]+)\s*(?:=\s*([0-9]+))?\s*,`)
		next := 0
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			if m[2] != "" {
				next, _ = strconv.Atoi(m[2])
			}
			if m[1] != "COUNT" {
				out = append(out, enumEntry{e.kind, m[1], next})
			}
			next++
		}
	}
	return out
}

func TestPinnedTablesMatchHeader(t *testing.T) {
	want := committedEnums(t)
	header := peerHeader()
	if src, err := os.ReadFile(header); header != "" && err == nil {
		got := headerEnums(t, string(src))
		if len(got) != len(want) {
			t.Fatalf("header has %d enumerators, committed copy %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("header %v, committed copy %v", got[i], want[i])
			}
		}
	} else {
		t.Logf("%s not present: checking against the committed copy only", header)
	}
	var nOp, nUnary, nGlu int
	for _, e := range want {
		switch e.kind {
		case "type":
			if ggmlTypes[e.value] != e.name {
				t.Errorf("type %d: table %q, ggml %q", e.value, ggmlTypes[e.value], e.name)
			}
		case "op":
			nOp++
			if ggmlOps[e.value] != e.name {
				t.Errorf("op %d: table %q, ggml %q", e.value, ggmlOps[e.value], e.name)
			}
		case "unary":
			nUnary++
			if ggmlUnary[e.value] != e.name {
				t.Errorf("unary %d: table %q, ggml %q", e.value, ggmlUnary[e.value], e.name)
			}
		case "glu":
			nGlu++
			if ggmlGlu[e.value] != e.name {
				t.Errorf("glu %d: table %q, ggml %q", e.value, ggmlGlu[e.value], e.name)
			}
		}
	}
	if nOp != len(ggmlOps) || nUnary != len(ggmlUnary) || nGlu != len(ggmlGlu) {
		t.Errorf("counts: ops %d/%d unary %d/%d glu %d/%d", nOp, len(ggmlOps), nUnary, len(ggmlUnary), nGlu, len(ggmlGlu))
	}
}

// TestTableTranslatesRuntime checks that every ggml 0.27.0 op and type has
// a runtime counterpart of the same name and that the mapping round-trips.
func TestTableTranslatesRuntime(t *testing.T) {
	tab := GGML027()
	for w := range uint32(len(ggmlOps)) {
		op, ok := tab.Op(w)
		if !ok {
			t.Errorf("op %d %s: no runtime op", w, ggmlOps[w])
			continue
		}
		if op.String() != ggmlOps[w] {
			t.Errorf("op %d: runtime %s, ggml %s", w, op, ggmlOps[w])
		}
		if back, _ := tab.WireOp(op); back != w {
			t.Errorf("op %s: back to %d, want %d", op, back, w)
		}
	}
	for w := range uint32(ggmlTypeCount) {
		ty, ok := tab.Type(w)
		if ok != (ggmlTypes[w] != "") {
			t.Errorf("type %d: ok %v", w, ok)
		}
		if ok && ty.String() != strings.ToLower(ggmlTypes[w]) {
			t.Errorf("type %d: runtime %s", w, ty)
		}
	}
	if _, ok := tab.Type(ggmlTypeCount); ok {
		t.Error("type 43 translated")
	}
	if _, ok := tab.Op(uint32(len(ggmlOps))); ok {
		t.Error("op 101 translated")
	}
	for w := range int32(len(ggmlUnary)) {
		if u, ok := tab.Unary(w); !ok || u.String() != ggmlUnary[w] {
			t.Errorf("unary %d: %v %v", w, u, ok)
		}
	}
	for w := range int32(len(ggmlGlu)) {
		if g, ok := tab.Glu(w); !ok || g.String() != ggmlGlu[w] {
			t.Errorf("glu %d: %v %v", w, g, ok)
		}
	}
	if _, ok := tab.Unary(-1); ok {
		t.Error("unary -1 translated")
	}
	_ = runtime.OpCount
}

func sampleTensor() Tensor {
	tt := Tensor{ID: 0x5555_0000_1000, Type: 1, Buffer: 7, Ne: [4]uint32{8, 2, 1, 1}, Nb: [4]uint32{2, 16, 32, 32},
		Op: 2, Flags: 16, ViewSrc: 3, ViewOffs: 64, Data: 0x1_0000_0040, UseCount: 2}
	tt.OpParams[0], tt.OpParams[15] = -1, 42
	tt.Src[0], tt.Src[9] = 11, 12
	tt.SetName("hello")
	return tt
}

func TestTensorRoundTrip(t *testing.T) {
	tt := sampleTensor()
	b := AppendTensor(nil, &tt)
	if len(b) != TensorSize {
		t.Fatalf("encoded %d bytes", len(b))
	}
	// Field offsets of rpc_tensor, as captured from ggml 0.27.0's client.
	if le.Uint32(b[8:]) != 1 || le.Uint64(b[12:]) != 7 || le.Uint32(b[20:]) != 8 || le.Uint32(b[36:]) != 2 ||
		le.Uint32(b[52:]) != 2 || le.Uint32(b[120:]) != 16 || le.Uint64(b[220:]) != 0x1_0000_0040 || b[228] != 'h' {
		t.Fatalf("layout: % x", b)
	}
	got, err := DecodeTensor(b)
	if err != nil || got != tt {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if got.NameString() != "hello" {
		t.Fatalf("name %q", got.NameString())
	}
	if _, err := DecodeTensor(b[:TensorSize-1]); err == nil {
		t.Fatal("short tensor decoded")
	}
}

func TestGraphRoundTrip(t *testing.T) {
	g := &Graph{Device: 1, UID: 99, Nodes: []uint64{5, 6}, Tensors: []Tensor{sampleTensor(), sampleTensor()}}
	b := AppendGraph(nil, g)
	if len(b) != GraphComputeHeaderSize+16+4+2*TensorSize {
		t.Fatalf("size %d", len(b))
	}
	got, err := DecodeGraph(b)
	if err != nil || got.Device != 1 || got.UID != 99 || len(got.Nodes) != 2 || got.Tensors[1] != g.Tensors[1] {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range [][]byte{b[:10], b[:len(b)-1], append(bytes.Clone(b), 0)} {
		if _, err := DecodeGraph(bad); err == nil {
			t.Errorf("decoded %d bytes", len(bad))
		}
	}
	huge := bytes.Clone(b)
	le.PutUint32(huge[12:], 0xFFFFFFFF)
	if _, err := DecodeGraph(huge); err == nil {
		t.Error("decoded 4G nodes")
	}
}

func TestRequestSizes(t *testing.T) {
	for c := Cmd(0); c < CmdCount; c++ {
		_, fixed := RequestSize(c)
		if fixed == c.Variable() && c != CmdNone {
			t.Errorf("%s: fixed %v variable %v", c, fixed, c.Variable())
		}
	}
	if GetAllocSizeReqSize != 3260 || MemsetTensorReqSize != 313 || HelloRspSize != 28 {
		t.Error("sizes")
	}
	if CmdHello != 14 || CmdMemsetTensor != 17 || CmdNone != 23 || Cmd(200).String() != "cmd(200)" {
		t.Error("numbering")
	}
}

func TestReader(t *testing.T) {
	r := NewReader([]byte{1, 2, 0, 0, 0})
	if r.U8() != 1 || r.U32() != 2 || r.Err() != nil {
		t.Fatal("read")
	}
	r = NewReader([]byte{1})
	r.U64()
	if r.Err() == nil {
		t.Fatal("short read passed")
	}
	r = NewReader([]byte{1, 2})
	r.U8()
	if r.Err() == nil {
		t.Fatal("trailing bytes passed")
	}
}

func FuzzDecodeGraph(f *testing.F) {
	g := &Graph{Device: 0, UID: 1, Nodes: []uint64{5}, Tensors: []Tensor{sampleTensor()}}
	f.Add(AppendGraph(nil, g))
	f.Add([]byte{})
	f.Add(make([]byte, GraphComputeHeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeGraph(b)
		if err != nil {
			return
		}
		if !bytes.Equal(AppendGraph(nil, g), b) {
			t.Fatal("decode/encode mismatch")
		}
	})
}
