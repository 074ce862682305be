package cpukernels

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// fuzzTypes returns the block types with row conversions.
func fuzzTypes() []runtime.Type {
	return append([]runtime.Type{runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0,
		runtime.TypeQ8_1, runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K, runtime.TypeQ8_K},
		extraTypes()...)
}

// FuzzQuantRows feeds arbitrary bytes to every dequantizer and arbitrary
// float32 bit patterns (NaN, Inf, subnormals, huge values) to every
// quantizer: none may panic, and each must re-read what it wrote.
func FuzzQuantRows(f *testing.F) {
	f.Add([]byte{0x3c, 0x00, 0xff, 0x7f, 0x80, 0x01})
	f.Add([]byte{0x00, 0x00, 0x80, 0x7f, 0x00, 0x00, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range fuzzTypes() {
			n := typ.BlockSize()
			raw := make([]byte, typ.RowSize(n))
			for i := range raw {
				if len(data) > 0 {
					raw[i] = data[i%len(data)]
				}
			}
			y := make([]float32, n)
			if err := ToFloat(typ, raw, y); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			x := make([]float32, n)
			for i := range x {
				var b [4]byte
				for j := range b {
					if len(data) > 0 {
						b[j] = data[(4*i+j)%len(data)]
					}
				}
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
			}
			if !CanQuantize(typ) {
				continue
			}
			for _, q := range []func(runtime.Type, []float32, []byte) error{FromFloat, FromFloatCPU} {
				if err := q(typ, x, raw); err != nil {
					t.Fatalf("%s: %v", typ, err)
				}
				if err := ToFloat(typ, raw, y); err != nil {
					t.Fatalf("%s: %v", typ, err)
				}
			}
		}
	})
}

// TestQuantRowErrors checks the shape errors of the row conversions.
func TestQuantRowErrors(t *testing.T) {
	for _, typ := range fuzzTypes() {
		n := typ.BlockSize()
		if err := FromFloat(typ, make([]float32, n+1), make([]byte, 2*typ.Size())); err == nil {
			t.Errorf("%s: %d elements accepted", typ, n+1)
		}
		if err := ToFloat(typ, make([]byte, typ.Size()-1), make([]float32, n)); err == nil {
			t.Errorf("%s: short source accepted", typ)
		}
		if err := FromFloatCPU(typ, make([]float32, n), make([]byte, typ.Size()-1)); err == nil {
			t.Errorf("%s: short destination accepted", typ)
		}
	}
	if _, err := Quantize(runtime.TypeQ4_K, make([]float32, 512), make([]byte, 144), 2, 256); err == nil {
		t.Error("Quantize into a short buffer accepted")
	}
	if _, err := Quantize(runtime.TypeQ4_K, make([]float32, 512), make([]byte, 288), 2, 128); err == nil {
		t.Error("Quantize of a partial block accepted")
	}
	if _, err := Quantize(runtime.TypeF32, make([]float32, 4), make([]byte, 16), 1, 4); err == nil {
		t.Error("Quantize to f32 accepted")
	}
}
