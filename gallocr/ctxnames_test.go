package gallocr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// refusingType is a host buffer type of 64-byte buffers that refuses its
// second allocation.
type refusingType struct {
	*cpu.BufferType
	n int
}

func (r *refusingType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	if r.n++; r.n > 1 {
		return nil, runtime.ErrOutOfMemory
	}
	return r.BufferType.AllocBuffer(size)
}

// TestAllocCtxTensorsErrorNamesTensors: a failed buffer is reported with
// the names of the tensors it was for, not their context indices
// ("tensors 1..1").
func TestAllocCtxTensorsErrorNamesTensors(t *testing.T) {
	bt, err := cpu.NewBufferType(cpu.BufferTypeOptions{MaxSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"emb", "out"}, `for tensor "out"`},
		{[]string{"emb", "", "b"}, `for 2 tensors #1 .. "b"`},
	} {
		c := runtime.NewContext()
		for i, name := range tc.names {
			n := int64(16)
			if i > 0 && len(tc.names) > 2 {
				n = 4
			}
			x := c.NewTensor1D(runtime.TypeF32, n)
			x.Name = name
		}
		_, err := gallocr.AllocCtxTensors(c, &refusingType{BufferType: bt})
		if !errors.Is(err, runtime.ErrOutOfMemory) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %s", tc.names, err, tc.want)
		}
	}
}
