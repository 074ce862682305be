package cpukernels

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// Custom ops (MAP_CUSTOM1/2/3, CUSTOM) run the node's Go function
// (runtime.CustomOp) on the parts of a Compute. A node without one (it
// came over RPC or from graph JSON) is unsupported.

// unsupportedCustom returns why custom node t cannot run, or "" (ok
// reports whether t's op is a custom op).
func unsupportedCustom(t *runtime.Tensor) (why string, ok bool) {
	if !t.Op.IsCustom() {
		return "", false
	}
	if t.Custom == nil || t.Custom.Fn == nil {
		return "custom op without a Go function (functions cannot travel over RPC or in graph JSON)", true
	}
	n := map[runtime.Op]int{runtime.OpMapCustom1: 1, runtime.OpMapCustom2: 2, runtime.OpMapCustom3: 3}[t.Op]
	if why := srcOK(t, n); why != "" {
		return why, true
	}
	return "", true
}

// customTensor gives a custom function t with exactly its bytes.
func customTensor(t *runtime.Tensor, b []byte) runtime.CustomTensor {
	n := t.NBytes()
	return runtime.CustomTensor{Tensor: t, Data: b[:n:n]}
}

// computeCustom runs part ith of the node's function, split in
// min(nth, NTasks) parts (all nth when NTasks ≤ 0); a panic in the
// function comes back as an error.
func (k *kernel) computeCustom(ith, nth int) (err error) {
	t, op := k.t, k.t.Custom
	n := nth
	if op.NTasks > 0 && op.NTasks < n {
		n = op.NTasks
	}
	if ith >= n {
		return nil
	}
	src := make([]runtime.CustomTensor, 0, t.NumSrc())
	for i, s := range t.Src[:t.NumSrc()] {
		if s == nil {
			src = append(src, runtime.CustomTensor{})
			continue
		}
		src = append(src, customTensor(s, k.src[i]))
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tensor %s: custom function panicked: %v", t, r)
		}
	}()
	if err := op.Fn(customTensor(t, k.dst), src, ith, n); err != nil {
		return fmt.Errorf("tensor %s: custom function: %w", t, err)
	}
	return nil
}
