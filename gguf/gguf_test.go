package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.gguf.bin")

// allValues is one key of every value type, arrays of each, an empty
// array and a nested array.
func allValues(t testing.TB) []KV {
	nested, err := NestedArray(ArrayOf([]int32{1, -2}), ArrayOf([]string{"a", "bc"}), ArrayOf([]float64{}))
	if err != nil {
		t.Fatal(err)
	}
	deep, err := NestedArray(nested, ArrayOf([]bool{true}))
	if err != nil {
		t.Fatal(err)
	}
	return []KV{
		{"u8", Of(uint8(200))}, {"i8", Of(int8(-100))}, {"u16", Of(uint16(60000))}, {"i16", Of(int16(-30000))},
		{"u32", Of(uint32(4000000000))}, {"i32", Of(int32(-2000000000))}, {"f32", Of(float32(1.5))},
		{"bool", Of(true)}, {"str", Of("héllo\x00world")}, {"u64", Of(uint64(math.MaxUint64))},
		{"i64", Of(int64(math.MinInt64))}, {"f64", Of(math.Pi)},
		{"a.u8", ArrayOf([]uint8{1, 2, 3})}, {"a.i8", ArrayOf([]int8{-1})}, {"a.u16", ArrayOf([]uint16{7, 8})},
		{"a.i16", ArrayOf([]int16{-7})}, {"a.u32", ArrayOf([]uint32{9})}, {"a.i32", ArrayOf([]int32{-9, 10})},
		{"a.f32", ArrayOf([]float32{0.25, float32(math.Inf(-1))})}, {"a.bool", ArrayOf([]bool{true, false})},
		{"a.str", ArrayOf([]string{"", "x", "yz"})}, {"a.u64", ArrayOf([]uint64{1 << 40})},
		{"a.i64", ArrayOf([]int64{-1 << 40})}, {"a.f64", ArrayOf([]float64{-0.5})},
		{"a.empty", ArrayOf([]uint32{})}, {"a.nested", deep},
	}
}

type tensorSpec struct {
	name string
	typ  runtime.Type
	ne   []int64
}

func bytesFor(t testing.TB, typ runtime.Type, ne []int64, seed byte) []byte {
	full := [MaxDims]int64{1, 1, 1, 1}
	copy(full[:], ne)
	n, ok := tensorBytes(typ, full)
	if !ok {
		t.Fatalf("bad test shape %v %s", ne, typ)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func buildFile(t testing.TB, version uint32, align uint32, kvs []KV, specs []tensorSpec) ([]byte, [][]byte) {
	w := NewWriter()
	if err := w.SetVersion(version); err != nil {
		t.Fatal(err)
	}
	if align != 0 {
		if err := w.Set(KeyAlignment, Of(align)); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range kvs {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	var datas [][]byte
	for i, s := range specs {
		d := bytesFor(t, s.typ, s.ne, byte(i))
		datas = append(datas, d)
		if err := w.AddTensor(s.name, s.typ, s.ne, d); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo says %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes(), datas
}

func TestRoundTrip(t *testing.T) {
	specs := []tensorSpec{
		{"a", runtime.TypeF32, []int64{3}},
		{"b.weight", runtime.TypeF16, []int64{5, 3}},
		{"c", runtime.TypeQ8_0, []int64{64, 2, 1, 1}},
		{"d", runtime.TypeQ4_K, []int64{256, 1, 2}},
		{"e", runtime.TypeI32, []int64{2, 1, 1, 3}},
		{"zero", runtime.TypeF32, []int64{0, 4}},
	}
	for _, tc := range []struct {
		name    string
		version uint32
		align   uint32
		specs   []tensorSpec
	}{
		{"v3", 3, 0, specs},
		{"v2", 2, 0, specs},
		{"align64", 3, 64, specs},
		{"align1", 3, 1, specs},
		{"no-tensors", 3, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kvs := allValues(t)
			file, datas := buildFile(t, tc.version, tc.align, kvs, tc.specs)
			f, err := Parse(file)
			if err != nil {
				t.Fatal(err)
			}
			if f.Version != tc.version {
				t.Errorf("version %d, want %d", f.Version, tc.version)
			}
			wantAlign := uint64(DefaultAlignment)
			if tc.align != 0 {
				wantAlign = uint64(tc.align)
				kvs = append([]KV{{KeyAlignment, Of(tc.align)}}, kvs...)
			}
			if f.Alignment != wantAlign {
				t.Errorf("alignment %d, want %d", f.Alignment, wantAlign)
			}
			if !reflect.DeepEqual(f.KV, kvs) {
				t.Errorf("metadata differs:\n got %v\nwant %v", f.KV, kvs)
			}
			if len(f.Tensors) != len(tc.specs) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tc.specs))
			}
			if (len(tc.specs) > 0 && f.DataOffset%wantAlign != 0) || uint64(len(file))%wantAlign != 0 {
				t.Errorf("data offset %d / file size %d not aligned to %d", f.DataOffset, len(file), wantAlign)
			}
			var next uint64
			for i, s := range tc.specs {
				ti := f.Tensors[i]
				if ti.Name != s.name || ti.Type != s.typ || !reflect.DeepEqual(ti.Shape()[:len(trimOnes(s.ne))], trimOnes(s.ne)) {
					t.Errorf("tensor %d: %s %s %v, want %s %s %v", i, ti.Name, ti.Type, ti.Shape(), s.name, s.typ, s.ne)
				}
				if ti.Offset != next {
					t.Errorf("tensor %q offset %d, want %d (ggml lays tensors out in order)", ti.Name, ti.Offset, next)
				}
				next += runtime.AlignUp(ti.NBytes(), wantAlign)
				got := file[f.DataOffset+ti.Offset:][:ti.NBytes()]
				if !bytes.Equal(got, datas[i]) {
					t.Errorf("tensor %q data differs", ti.Name)
				}
				if g, ok := f.Tensor(s.name); !ok || g != ti {
					t.Errorf("Tensor(%q) = %v, %v", s.name, g, ok)
				}
			}
		})
	}
}

func trimOnes(ne []int64) []int64 {
	n := len(ne)
	for n > 1 && ne[n-1] == 1 {
		n--
	}
	return ne[:n]
}

// le builds expected bytes by hand, independently of the encoder.
type le struct{ b []byte }

func (l *le) u32(v uint32) *le { l.b = binary.LittleEndian.AppendUint32(l.b, v); return l }
func (l *le) u64(v uint64) *le { l.b = binary.LittleEndian.AppendUint64(l.b, v); return l }
func (l *le) s(v string) *le   { l.u64(uint64(len(v))); l.b = append(l.b, v...); return l }
func (l *le) raw(p ...byte) *le {
	l.b = append(l.b, p...)
	return l
}
func (l *le) pad(a int) *le {
	for len(l.b)%a != 0 {
		l.b = append(l.b, 0)
	}
	return l
}

// TestByteLayout pins the writer's bytes to ggml's layout, written out by
// hand: header, a u32, a string array, a nested array, two tensor infos
// (n_dims without trailing ones), padding, data padded per tensor.
func TestByteLayout(t *testing.T) {
	w := NewWriter()
	nested, _ := NestedArray(ArrayOf([]uint8{7}))
	for _, kv := range []KV{{"k", Of(uint32(5))}, {"toks", ArrayOf([]string{"a", "bc"})}, {"n", nested}, {"t", Of(true)}} {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddTensor("x", runtime.TypeF32, []int64{3, 1}, make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("y", runtime.TypeI8, []int64{2, 2}, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := w.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	want := (&le{}).raw('G', 'G', 'U', 'F').u32(3).u64(2).u64(4).
		s("k").u32(uint32(TypeUint32)).u32(5).
		s("toks").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).s("a").s("bc").
		s("n").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(uint32(TypeUint8)).u64(1).raw(7).
		s("t").u32(uint32(TypeBool)).raw(1).
		s("x").u32(1).u64(3).u32(uint32(runtime.TypeF32)).u64(0).
		s("y").u32(2).u64(2).u64(2).u32(uint32(runtime.TypeI8)).u64(32).
		pad(32).raw(make([]byte, 12)...).pad(32).raw(1, 2, 3, 4).pad(32)
	if !bytes.Equal(got.Bytes(), want.b) {
		t.Fatalf("layout differs:\n got % x\nwant % x", got.Bytes(), want.b)
	}
}

// TestGolden keeps a tiny file made by this writer (testdata/tiny.gguf.bin)
// so a change of layout shows up as a diff; -update rewrites it.
func TestGolden(t *testing.T) {
	file, _ := buildFile(t, 3, 0, allValues(t), []tensorSpec{{"w", runtime.TypeQ8_0, []int64{32, 2}}, {"b", runtime.TypeF32, []int64{2}}})
	path := filepath.Join("testdata", "tiny.gguf.bin")
	if *update {
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, want) {
		t.Fatalf("writer output differs from %s (run go test ./gguf -run TestGolden -update if intended)", path)
	}
}

func TestOpen(t *testing.T) {
	file, datas := buildFile(t, 3, 0, allValues(t), []tensorSpec{{"w", runtime.TypeF16, []int64{4, 4}}, {"v", runtime.TypeF32, []int64{3}}})
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range m.Tensors {
		d, err := m.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d, datas[i]) {
			t.Errorf("tensor %q: mapped bytes differ", ti.Name)
		}
	}
	if s, err := m.String("str"); err != nil || s != "héllo\x00world" {
		t.Errorf("String(str) = %q, %v", s, err)
	}
	if n, err := m.Int("u16"); err != nil || n != 60000 {
		t.Errorf("Int(u16) = %d, %v", n, err)
	}
	if _, err := m.Int("str"); !errors.Is(err, ErrValue) {
		t.Errorf("Int(str): %v, want ErrValue", err)
	}
	if _, err := m.Float("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Float(missing): %v, want ErrNotFound", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Close: %v, want os.ErrClosed", err)
	}
	if _, err := m.TensorData(m.Tensors[0]); !errors.Is(err, os.ErrClosed) {
		t.Errorf("TensorData after Close: %v, want os.ErrClosed", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(empty); !errors.Is(err, ErrFormat) {
		t.Errorf("Open(empty): %v, want ErrFormat", err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open(directory) succeeded")
	}
}

// header starts a file by hand: magic, version, counts.
func header(version uint32, nt, nkv uint64) *le {
	return (&le{}).raw('G', 'G', 'U', 'F').u32(version).u64(nt).u64(nkv)
}

// tinfo appends a tensor info.
func (l *le) tinfo(name string, ne []uint64, typ uint32, off uint64) *le {
	l.s(name).u32(uint32(len(ne)))
	for _, d := range ne {
		l.u64(d)
	}
	return l.u32(typ).u64(off)
}

func TestMalformed(t *testing.T) {
	big := uint64(1) << 62
	for _, tc := range []struct {
		name string
		file []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrFormat, "magic"},
		{"bad magic", []byte("GGUX\x03\x00\x00\x00"), ErrFormat, "magic"},
		{"version 1", header(1, 0, 0).b, ErrVersion, "version 1"},
		{"version 4", header(4, 0, 0).b, ErrVersion, "version 4"},
		{"big endian", (&le{}).raw('G', 'G', 'U', 'F').raw(0, 0, 0, 3).b, ErrVersion, "big-endian"},
		{"short header", header(3, 0, 0).b[:12], ErrFormat, "tensor count"},
		{"huge tensor count", header(3, big, 0).b, ErrFormat, "tensor count"},
		{"huge kv count", header(3, 0, big).b, ErrFormat, "metadata key count"},
		{"huge key length", header(3, 0, 1).u64(big).raw(make([]byte, 16)...).b, ErrFormat, "key 0"},
		{"empty key", header(3, 0, 1).s("").u32(0).raw(1).b, ErrFormat, "empty key"},
		{"duplicate key", header(3, 0, 2).s("a").u32(0).raw(1).s("a").u32(0).raw(1).b, ErrFormat, "duplicate key"},
		{"bad value type", header(3, 0, 1).s("a").u32(13).raw(1).b, ErrFormat, "invalid value type 13"},
		{"truncated value", header(3, 0, 1).s("a").u32(uint32(TypeUint64)).raw(1, 2).b, ErrFormat, `value of key "a"`},
		{"huge string", header(3, 0, 1).s("a").u32(uint32(TypeString)).u64(big).raw(1).b, ErrFormat, "exceeds"},
		{"huge array", header(3, 0, 1).s("a").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(big).raw(make([]byte, 16)...).b, ErrFormat, "do not fit"},
		{"huge string array", header(3, 0, 1).s("a").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3).u64(0).b, ErrFormat, "do not fit"},
		{"bad array type", header(3, 0, 1).s("a").u32(uint32(TypeArray)).u32(99).u64(0).b, ErrFormat, "invalid element type 99"},
		{"deep nesting", deepArray(40), ErrFormat, "nested more than"},
		{"alignment type", header(3, 0, 1).s(KeyAlignment).u32(uint32(TypeUint64)).u64(32).b, ErrFormat, "want u32"},
		{"alignment zero", header(3, 0, 1).s(KeyAlignment).u32(uint32(TypeUint32)).u32(0).b, ErrFormat, "power of two"},
		{"alignment 48", header(3, 0, 1).s(KeyAlignment).u32(uint32(TypeUint32)).u32(48).b, ErrFormat, "power of two"},
		{"name too long", header(3, 1, 0).tinfo(strings.Repeat("n", 64), []uint64{1}, 0, 0).b, ErrFormat, "at most 63"},
		{"duplicate tensor", header(3, 2, 0).tinfo("a", []uint64{1}, 0, 0).tinfo("a", []uint64{1}, 0, 32).b, ErrFormat, "duplicate tensor"},
		{"five dims", header(3, 1, 0).tinfo("a", []uint64{1, 1, 1, 1, 1}, 0, 0).b, ErrFormat, "5 dimensions"},
		{"negative dim", header(3, 1, 0).tinfo("a", []uint64{1 << 63}, 0, 0).b, ErrFormat, "negative"},
		{"invalid type", header(3, 1, 0).tinfo("a", []uint64{1}, 4, 0).b, ErrFormat, "invalid ggml type 4"},
		{"negative type", header(3, 1, 0).tinfo("a", []uint64{1}, 0xffffffff, 0).b, ErrFormat, "invalid ggml type"},
		{"partial block", header(3, 1, 0).tinfo("a", []uint64{31}, uint32(runtime.TypeQ8_0), 0).b, ErrFormat, "block size 32"},
		{"overflow shape", header(3, 1, 0).tinfo("a", []uint64{1 << 40, 1 << 30}, 0, 0).b, ErrFormat, "2^63"},
		{"overflow elements", header(3, 1, 0).tinfo("a", []uint64{1 << 32, 1 << 32}, uint32(runtime.TypeQ4_0), 0).b, ErrFormat, "2^63"},
		{"misaligned offset", header(3, 1, 0).tinfo("a", []uint64{1}, 0, 4).pad(32).raw(make([]byte, 64)...).b, ErrFormat, "not a multiple"},
		{"data past end", header(3, 1, 0).tinfo("a", []uint64{16}, 0, 0).pad(32).raw(make([]byte, 63)...).b, ErrFormat, "past the end"},
		{"huge offset", header(3, 1, 0).tinfo("a", []uint64{1}, 0, 1<<63).pad(32).b, ErrFormat, "past the end"},
		{"no data section", header(3, 1, 0).tinfo("a", []uint64{1}, 0, 0).b, ErrFormat, "data section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.file)
			if err == nil {
				t.Fatalf("parsed: %+v", f)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

func deepArray(depth int) []byte {
	l := header(3, 0, 1).s("deep").u32(uint32(TypeArray))
	for i := 0; i < depth; i++ {
		l.u32(uint32(TypeArray)).u64(1)
	}
	return l.u32(uint32(TypeUint8)).u64(0).b
}

// TestTruncated parses every prefix of a valid file: each must fail
// cleanly (no panic), except those that still hold a whole file.
func TestTruncated(t *testing.T) {
	file, _ := buildFile(t, 3, 0, allValues(t), []tensorSpec{{"w", runtime.TypeQ8_0, []int64{32, 2}}, {"b", runtime.TypeF32, []int64{2}}})
	full, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	last := full.Tensors[len(full.Tensors)-1]
	end := full.DataOffset + last.Offset + last.NBytes()
	for n := 0; n < len(file); n++ {
		_, err := Parse(file[:n])
		if uint64(n) >= end {
			if err != nil {
				t.Errorf("prefix %d (past the last tensor's data at %d): %v", n, end, err)
			}
			continue
		}
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("prefix %d: %v, want ErrFormat", n, err)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"empty key", w.Set("", Of(1.0))},
		{"zero value", w.Set("k", Value{})},
		{"alignment type", w.Set(KeyAlignment, Of(int32(32)))},
		{"alignment 3", w.Set(KeyAlignment, Of(uint32(3)))},
		{"version", w.SetVersion(1)},
		{"empty name", w.AddTensor("", runtime.TypeF32, []int64{1}, make([]byte, 4))},
		{"long name", w.AddTensor(strings.Repeat("x", 64), runtime.TypeF32, []int64{1}, make([]byte, 4))},
		{"bad type", w.AddTensor("t", runtime.Type(4), []int64{1}, make([]byte, 4))},
		{"no dims", w.AddTensor("t", runtime.TypeF32, nil, nil)},
		{"five dims", w.AddTensor("t", runtime.TypeF32, []int64{1, 1, 1, 1, 1}, make([]byte, 4))},
		{"negative", w.AddTensor("t", runtime.TypeF32, []int64{-1}, nil)},
		{"partial block", w.AddTensor("t", runtime.TypeQ8_0, []int64{16}, make([]byte, 17))},
		{"overflow", w.AddTensor("t", runtime.TypeF32, []int64{1 << 40, 1 << 40}, nil)},
		{"short data", w.AddTensor("t", runtime.TypeF32, []int64{2}, make([]byte, 4))},
	} {
		if !errors.Is(tc.err, ErrValue) && !errors.Is(tc.err, ErrVersion) {
			t.Errorf("%s: %v, want ErrValue", tc.name, tc.err)
		}
	}
	if _, err := NestedArray(Of(int32(1))); !errors.Is(err, ErrValue) {
		t.Errorf("NestedArray(scalar): %v", err)
	}
	if err := w.AddTensor("t", runtime.TypeF32, []int64{1}, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t", runtime.TypeF32, []int64{1}, make([]byte, 4)); !errors.Is(err, ErrValue) {
		t.Errorf("duplicate tensor: %v", err)
	}
	if err := w.Set(KeyAlignment, Of(uint32(64))); !errors.Is(err, ErrValue) {
		t.Errorf("alignment after tensors: %v", err)
	}
	if err := w.Set("k", Of("a")); err != nil {
		t.Fatal(err)
	}
	if err := w.Set("k", Of("b")); err != nil { // replaces in place
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := f.String("k"); len(f.KV) != 1 || s != "b" {
		t.Errorf("replaced key: %v", f.KV)
	}
	if _, err := w.WriteTo(failWriter{}); err == nil {
		t.Error("WriteTo a failing writer succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestValueAccessors(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		str  string
		typ  ValueType
		n    int
		i    int64
		iok  bool
		f    float64
		fok  bool
		elem ValueType
	}{
		{Of(uint8(3)), "3", TypeUint8, 1, 3, true, 0, false, 0},
		{Of(uint64(math.MaxUint64)), "18446744073709551615", TypeUint64, 1, 0, false, 0, false, 0},
		{Of(int16(-4)), "-4", TypeInt16, 1, -4, true, 0, false, 0},
		{Of(float32(0.5)), "0.5", TypeFloat32, 1, 0, false, 0.5, true, 0},
		{Of("a\"b"), `"a\"b"`, TypeString, 1, 0, false, 0, false, 0},
		{ArrayOf([]int32{1, 2, 3, 4, 5, 6, 7, 8, 9}), "[1, 2, 3, 4, 5, 6, 7, 8, ... (9 elements)]", TypeArray, 9, 0, false, 0, false, TypeInt32},
		{Value{}, "<invalid>", 0, 0, 0, false, 0, false, 0},
	} {
		if got := tc.v.String(); got != tc.str {
			t.Errorf("String = %q, want %q", got, tc.str)
		}
		if tc.v.Type() != tc.typ || tc.v.Len() != tc.n || tc.v.ElemType() != tc.elem {
			t.Errorf("%v: type %s len %d elem %s", tc.v, tc.v.Type(), tc.v.Len(), tc.v.ElemType())
		}
		if i, ok := tc.v.Int(); i != tc.i || ok != tc.iok {
			t.Errorf("%v: Int = %d, %v", tc.v, i, ok)
		}
		if f, ok := tc.v.Float(); f != tc.f || ok != tc.fok {
			t.Errorf("%v: Float = %g, %v", tc.v, f, ok)
		}
	}
	if s, ok := ArrayAs[int32](ArrayOf([]int32{1})); !ok || len(s) != 1 {
		t.Error("ArrayAs")
	}
	if _, ok := ArrayAs[int32](Of(int32(1))); ok {
		t.Error("ArrayAs on a scalar")
	}
	if ValueType(13).Valid() || ValueType(13).String() != "type(13)" || TypeArray.String() != "arr" {
		t.Error("ValueType names")
	}
}
