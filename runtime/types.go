// Package runtime holds gogml's model of ggml: element types, ops, tensors
// with ne/nb strides, views, contexts, compute graphs, the graph-JSON format,
// and the small interfaces (buffer type, buffer, backend) that every backend
// implements.
//
// A tensor's memory is never a Go pointer: it is a place, (Buffer, Offset),
// and device addresses are plain integers. Planning memory is the job of the
// gallocr package; running graphs is the job of the backends.
package runtime

import (
	"fmt"
	"strings"
)

// Type is a ggml element type. The numeric values are ggml's, including the
// gaps left by types ggml removed.
type Type int32

// The element types of ggml 0.27.0.
const (
	TypeF32     Type = 0
	TypeF16     Type = 1
	TypeQ4_0    Type = 2
	TypeQ4_1    Type = 3
	TypeQ5_0    Type = 6
	TypeQ5_1    Type = 7
	TypeQ8_0    Type = 8
	TypeQ8_1    Type = 9
	TypeQ2_K    Type = 10
	TypeQ3_K    Type = 11
	TypeQ4_K    Type = 12
	TypeQ5_K    Type = 13
	TypeQ6_K    Type = 14
	TypeQ8_K    Type = 15
	TypeIQ2_XXS Type = 16
	TypeIQ2_XS  Type = 17
	TypeIQ3_XXS Type = 18
	TypeIQ1_S   Type = 19
	TypeIQ4_NL  Type = 20
	TypeIQ3_S   Type = 21
	TypeIQ2_S   Type = 22
	TypeIQ4_XS  Type = 23
	TypeI8      Type = 24
	TypeI16     Type = 25
	TypeI32     Type = 26
	TypeI64     Type = 27
	TypeF64     Type = 28
	TypeIQ1_M   Type = 29
	TypeBF16    Type = 30
	TypeTQ1_0   Type = 34
	TypeTQ2_0   Type = 35
	TypeMXFP4   Type = 39
	TypeNVFP4   Type = 40
	TypeQ1_0    Type = 41
	TypeQ2_0    Type = 42

	// TypeCount is one past the largest type value.
	TypeCount Type = 43
)

// TypeTraits describes the storage of one element type: elements are stored
// in blocks of BlockSize elements taking TypeSize bytes each.
type TypeTraits struct {
	Name      string
	BlockSize int64
	TypeSize  uint64
	Quantized bool
}

// qk is ggml's super-block size for the k-quants and i-quants.
const qk = 256

var typeTable = [TypeCount]TypeTraits{
	TypeF32:     {"f32", 1, 4, false},
	TypeF16:     {"f16", 1, 2, false},
	TypeQ4_0:    {"q4_0", 32, 2 + 16, true},
	TypeQ4_1:    {"q4_1", 32, 2*2 + 16, true},
	TypeQ5_0:    {"q5_0", 32, 2 + 4 + 16, true},
	TypeQ5_1:    {"q5_1", 32, 2*2 + 4 + 16, true},
	TypeQ8_0:    {"q8_0", 32, 2 + 32, true},
	TypeQ8_1:    {"q8_1", 32, 2*2 + 32, true},
	TypeQ2_K:    {"q2_k", qk, qk/16 + qk/4 + 2*2, true},
	TypeQ3_K:    {"q3_k", qk, qk/8 + qk/4 + 12 + 2, true},
	TypeQ4_K:    {"q4_k", qk, 2*2 + 12 + qk/2, true},
	TypeQ5_K:    {"q5_k", qk, 2*2 + 12 + qk/8 + qk/2, true},
	TypeQ6_K:    {"q6_k", qk, qk/2 + qk/4 + qk/16 + 2, true},
	TypeQ8_K:    {"q8_k", qk, 4 + qk + qk/16*2, true},
	TypeIQ2_XXS: {"iq2_xxs", qk, 2 + qk/8*2, true},
	TypeIQ2_XS:  {"iq2_xs", qk, 2 + qk/8*2 + qk/32, true},
	TypeIQ3_XXS: {"iq3_xxs", qk, 2 + 3*qk/8, true},
	TypeIQ1_S:   {"iq1_s", qk, 2 + qk/8 + qk/16, true},
	TypeIQ4_NL:  {"iq4_nl", 32, 2 + 16, true},
	TypeIQ3_S:   {"iq3_s", qk, 2 + qk/4 + qk/32 + qk/8 + qk/64, true},
	TypeIQ2_S:   {"iq2_s", qk, 2 + qk/4 + qk/16, true},
	TypeIQ4_XS:  {"iq4_xs", qk, 2 + 2 + qk/64 + qk/2, true},
	TypeI8:      {"i8", 1, 1, false},
	TypeI16:     {"i16", 1, 2, false},
	TypeI32:     {"i32", 1, 4, false},
	TypeI64:     {"i64", 1, 8, false},
	TypeF64:     {"f64", 1, 8, false},
	TypeIQ1_M:   {"iq1_m", qk, qk/8 + qk/16 + qk/32, true},
	TypeBF16:    {"bf16", 1, 2, false},
	TypeTQ1_0:   {"tq1_0", qk, 2 + 4*13, true},
	TypeTQ2_0:   {"tq2_0", qk, 2 + 64, true},
	TypeMXFP4:   {"mxfp4", 32, 1 + 16, true},
	TypeNVFP4:   {"nvfp4", 64, 4 + 32, true},
	TypeQ1_0:    {"q1_0", 128, 2 + 16, true},
	TypeQ2_0:    {"q2_0", 64, 2 + 16, true},
}

// Valid reports whether t is one of ggml's element types.
func (t Type) Valid() bool {
	return t >= 0 && t < TypeCount && typeTable[t].Name != ""
}

// Traits returns the storage description of t; the zero value for an
// invalid type.
func (t Type) Traits() TypeTraits {
	if !t.Valid() {
		return TypeTraits{}
	}
	return typeTable[t]
}

// String returns ggml's lower-case name of the type.
func (t Type) String() string {
	if !t.Valid() {
		return fmt.Sprintf("type(%d)", int32(t))
	}
	return typeTable[t].Name
}

// BlockSize is the number of elements in one block of t.
func (t Type) BlockSize() int64 { return t.Traits().BlockSize }

// Size is the number of bytes of one block of t.
func (t Type) Size() uint64 { return t.Traits().TypeSize }

// IsQuantized reports whether t stores elements in quantized blocks.
func (t Type) IsQuantized() bool { return t.Traits().Quantized }

// RowSize is the number of bytes of ne contiguous elements of type t, as
// ggml's row size computes it. ne should be a multiple of the block size.
func (t Type) RowSize(ne int64) uint64 {
	tr := t.Traits()
	if tr.BlockSize == 0 {
		return 0
	}
	return tr.TypeSize * uint64(ne) / uint64(tr.BlockSize)
}

// Types lists every valid type in numeric order.
func Types() []Type {
	out := make([]Type, 0, 31)
	for t := Type(0); t < TypeCount; t++ {
		if t.Valid() {
			out = append(out, t)
		}
	}
	return out
}

// ParseType looks up a type by its ggml name (case-insensitive).
func ParseType(name string) (Type, error) {
	n := strings.ToLower(name)
	for t := Type(0); t < TypeCount; t++ {
		if typeTable[t].Name != "" && typeTable[t].Name == n {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownType, name)
}
