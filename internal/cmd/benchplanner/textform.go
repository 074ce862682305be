package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/gogml/gogml/runtime"
)

// writeGraphText writes f in the plain text form cside/gallocr_bench.c
// reads: the buffer types (alignment, max size with 0 for unlimited, alloc
// pad), the buffer list, every tensor (type and op by ggml's names, flags,
// preallocated, view source and offset, ne, nb, sources; -1 for none), the
// leaf and node order and the buffer ids (a count of 0 when absent).
func writeGraphText(w io.Writer, f *runtime.GraphFile) error {
	bw := bufio.NewWriter(w)
	id := make(map[*runtime.Tensor]int, len(f.Tensors))
	for i, t := range f.Tensors {
		id[t] = i
	}
	ref := func(t *runtime.Tensor) (int, error) {
		if t == nil {
			return -1, nil
		}
		k, ok := id[t]
		if !ok {
			return 0, fmt.Errorf("tensor %q is not in the file's tensor list", t.Name)
		}
		return k, nil
	}
	fmt.Fprintf(bw, "gogml-planner-graph 1\nbuffer_types %d\n", len(f.BufferTypes))
	for _, bt := range f.BufferTypes {
		maxSize := bt.Max
		if maxSize == runtime.NoMaxSize {
			maxSize = 0
		}
		fmt.Fprintf(bw, "%d %d %d\n", bt.Align, maxSize, max(bt.AllocPad, 1))
	}
	fmt.Fprintf(bw, "buffers %d", len(f.Buffers))
	for _, b := range f.Buffers {
		fmt.Fprintf(bw, " %d", b)
	}
	fmt.Fprintf(bw, "\ntensors %d\n", len(f.Tensors))
	for i, t := range f.Tensors {
		vs, err := ref(t.ViewSrc)
		if err != nil {
			return fmt.Errorf("tensor %d: view source: %w", i, err)
		}
		pre := 0
		if t.Preallocated {
			pre = 1
		}
		fmt.Fprintf(bw, "%s %s %d %d %d %d", t.Type, t.Op, t.Flags, pre, vs, t.ViewOffs)
		for _, n := range t.Ne {
			fmt.Fprintf(bw, " %d", n)
		}
		for _, n := range t.Nb {
			fmt.Fprintf(bw, " %d", n)
		}
		ns := t.NumSrc()
		fmt.Fprintf(bw, " %d", ns)
		for j := range ns {
			s, err := ref(t.Src[j])
			if err != nil {
				return fmt.Errorf("tensor %d: source %d: %w", i, j, err)
			}
			fmt.Fprintf(bw, " %d", s)
		}
		bw.WriteByte('\n')
	}
	list := func(name string, ts []*runtime.Tensor) error {
		fmt.Fprintf(bw, "%s %d", name, len(ts))
		for _, t := range ts {
			k, err := ref(t)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(bw, " %d", k)
		}
		bw.WriteByte('\n')
		return nil
	}
	if err := list("leafs", f.Graph.Leafs()); err != nil {
		return err
	}
	if err := list("nodes", f.Graph.Nodes()); err != nil {
		return err
	}
	for _, ids := range []struct {
		name string
		v    []int
	}{{"leaf_buffer_ids", f.LeafBufferIDs}, {"node_buffer_ids", f.NodeBufferIDs}} {
		fmt.Fprintf(bw, "%s %d", ids.name, len(ids.v))
		for _, x := range ids.v {
			fmt.Fprintf(bw, " %d", x)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
