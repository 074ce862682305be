package gguf

import (
	"fmt"
	"strconv"
	"strings"
)

// ValueType is the type tag of a metadata value, with GGUF's numbers.
type ValueType uint32

// The metadata value types of GGUF v2 and v3 (gguf.h's enum gguf_type).
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var typeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// fixedSize is the encoded size of one value of a fixed-size type, 0 for
// strings, arrays and unknown types.
func (t ValueType) fixedSize() uint64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one encoded value of type t takes: a string
// has its 8-byte length, a nested array its 4-byte type and 8-byte count.
func (t ValueType) minSize() uint64 {
	switch t {
	case TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return t.fixedSize()
}

// Valid reports whether t is one of GGUF's value types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// String returns ggml's short name of the type ("u32", "str", "arr", ...).
func (t ValueType) String() string {
	if !t.Valid() {
		return fmt.Sprintf("type(%d)", uint32(t))
	}
	return typeNames[t]
}

// Scalar is the set of Go types that hold one GGUF metadata value.
type Scalar interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64
}

// Value is one metadata value: a scalar, an array of scalars of one type,
// or an array of arrays (a nested array). The zero Value is invalid. Values
// are immutable once made; the slices they hold must not be modified.
type Value struct {
	typ  ValueType // TypeArray for arrays
	elem ValueType // element type of an array
	v    any       // a Scalar, a []Scalar, or []Value for nested arrays
}

func scalarType(x any) (ValueType, bool) {
	switch x.(type) {
	case uint8:
		return TypeUint8, true
	case int8:
		return TypeInt8, true
	case uint16:
		return TypeUint16, true
	case int16:
		return TypeInt16, true
	case uint32:
		return TypeUint32, true
	case int32:
		return TypeInt32, true
	case float32:
		return TypeFloat32, true
	case bool:
		return TypeBool, true
	case string:
		return TypeString, true
	case uint64:
		return TypeUint64, true
	case int64:
		return TypeInt64, true
	case float64:
		return TypeFloat64, true
	}
	return 0, false
}

func sliceType(x any) (ValueType, int, bool) {
	switch s := x.(type) {
	case []uint8:
		return TypeUint8, len(s), true
	case []int8:
		return TypeInt8, len(s), true
	case []uint16:
		return TypeUint16, len(s), true
	case []int16:
		return TypeInt16, len(s), true
	case []uint32:
		return TypeUint32, len(s), true
	case []int32:
		return TypeInt32, len(s), true
	case []float32:
		return TypeFloat32, len(s), true
	case []bool:
		return TypeBool, len(s), true
	case []string:
		return TypeString, len(s), true
	case []uint64:
		return TypeUint64, len(s), true
	case []int64:
		return TypeInt64, len(s), true
	case []float64:
		return TypeFloat64, len(s), true
	case []Value:
		return TypeArray, len(s), true
	}
	return 0, 0, false
}

// Of returns the scalar value x.
func Of[T Scalar](x T) Value {
	t, _ := scalarType(any(x))
	return Value{typ: t, v: x}
}

// ArrayOf returns an array of scalars. The slice is kept, not copied.
func ArrayOf[T Scalar](xs []T) Value {
	if xs == nil {
		xs = []T{}
	}
	t, _, _ := sliceType(any(xs))
	return Value{typ: TypeArray, elem: t, v: xs}
}

// NestedArray returns an array whose elements are the arrays arrs (GGUF
// allows arrays of arrays; ggml's own reader rejects them, llama.cpp
// files never hold them). Every element must be an array.
func NestedArray(arrs ...Value) (Value, error) {
	for i, a := range arrs {
		if a.typ != TypeArray {
			return Value{}, fmt.Errorf("gguf: nested array element %d is a %s, not an array: %w", i, a.typ, ErrValue)
		}
	}
	if arrs == nil {
		arrs = []Value{}
	}
	return Value{typ: TypeArray, elem: TypeArray, v: arrs}, nil
}

// Type is the value's type: TypeArray for arrays.
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array (TypeArray for a nested
// array); meaningless for scalars.
func (v Value) ElemType() ValueType { return v.elem }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.typ == TypeArray }

// Len is the number of elements of an array, 1 for a scalar and 0 for
// the zero Value.
func (v Value) Len() int {
	if v.v == nil {
		return 0
	}
	if v.typ != TypeArray {
		return 1
	}
	_, n, _ := sliceType(v.v)
	return n
}

// Interface returns the Go value: a Scalar, a slice of one, or []Value
// for a nested array. The caller must not modify a returned slice.
func (v Value) Interface() any { return v.v }

// As returns v's scalar when it has type T.
func As[T Scalar](v Value) (T, bool) {
	x, ok := v.v.(T)
	return x, ok
}

// ArrayAs returns v's elements when v is an array of T. The caller must
// not modify the slice.
func ArrayAs[T Scalar](v Value) ([]T, bool) {
	if v.typ != TypeArray {
		return nil, false
	}
	x, ok := v.v.([]T)
	return x, ok
}

// Elems returns the elements of a nested array.
func (v Value) Elems() ([]Value, bool) {
	x, ok := v.v.([]Value)
	return x, ok
}

// Int returns an integer scalar of any width and signedness as an int64;
// false for other types and for a uint64 above MaxInt64.
func (v Value) Int() (int64, bool) {
	switch x := v.v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x > 1<<63-1 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

// Float returns a float32 or float64 scalar as a float64.
func (v Value) Float() (float64, bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// String formats the value for people: scalars as Go would print them
// (strings quoted), arrays as [a, b, ...] with at most 8 elements shown
// and the total count after longer ones.
func (v Value) String() string {
	return v.format(8)
}

func (v Value) format(maxElems int) string {
	if v.v == nil {
		return "<invalid>"
	}
	if v.typ != TypeArray {
		if s, ok := v.v.(string); ok {
			return strconv.Quote(s)
		}
		return fmt.Sprint(v.v)
	}
	n := v.Len()
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n && i < maxElems; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.index(i).format(maxElems))
	}
	if n > maxElems {
		fmt.Fprintf(&b, ", ... (%d elements)", n)
	}
	b.WriteByte(']')
	return b.String()
}

// index returns element i of an array as a Value.
func (v Value) index(i int) Value {
	switch s := v.v.(type) {
	case []uint8:
		return Of(s[i])
	case []int8:
		return Of(s[i])
	case []uint16:
		return Of(s[i])
	case []int16:
		return Of(s[i])
	case []uint32:
		return Of(s[i])
	case []int32:
		return Of(s[i])
	case []float32:
		return Of(s[i])
	case []bool:
		return Of(s[i])
	case []string:
		return Of(s[i])
	case []uint64:
		return Of(s[i])
	case []int64:
		return Of(s[i])
	case []float64:
		return Of(s[i])
	case []Value:
		return s[i]
	}
	return Value{}
}

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}
