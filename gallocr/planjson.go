package gallocr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// PlanFormat is the format tag of plan files.
const PlanFormat = "plan/v1"

// PlanFile plans a graph file with its own buffer list, node and leaf
// buffer ids.
func PlanFile(f *runtime.GraphFile, strategy Strategy) (*Plan, error) {
	return PlanGraph(f.Graph, f.BufferList(), PlanOptions{
		NodeBufferIDs: f.NodeBufferIDs, LeafBufferIDs: f.LeafBufferIDs, Strategy: strategy,
	})
}

// FilePlacements returns the placement of every tensor of f, in file order:
// tensors the plan does not place (outside the graph, preallocated) get
// Buffer -1.
func (pl *Plan) FilePlacements(f *runtime.GraphFile) []Placement {
	pos := make(map[*runtime.Tensor]int, len(pl.Index.Tensors))
	for i, t := range pl.Index.Tensors {
		if pl.Index.InGraph[i] {
			pos[t] = i
		}
	}
	out := make([]Placement, len(f.Tensors))
	for i, t := range f.Tensors {
		out[i] = Placement{Buffer: -1}
		if k, ok := pos[t]; ok {
			out[i] = pl.Placements[k]
		}
	}
	return out
}

// WritePlanFile writes the plan of graph file f in the plan/v1 format, one
// tensor per line; the same plan gives the same bytes.
func WritePlanFile(w io.Writer, f *runtime.GraphFile, pl *Plan) error {
	var b bytes.Buffer
	b.WriteString("{\n  \"format\": \"plan/v1\",\n  \"buffers\": [\n")
	for i, bi := range f.Buffers {
		parts := make([]string, len(pl.Chunks[i]))
		for c, s := range pl.Chunks[i] {
			parts[c] = strconv.FormatUint(s, 10)
		}
		fmt.Fprintf(&b, "    {\"buffer_type\": %d, \"chunks\": [%s]}%s", bi, strings.Join(parts, ", "), sep(i, len(f.Buffers)))
	}
	b.WriteString("  ],\n  \"tensors\": [\n")
	places := pl.FilePlacements(f)
	for i, t := range f.Tensors {
		name, _ := json.Marshal(t.Name)
		p := places[i]
		if p.Buffer < 0 {
			fmt.Fprintf(&b, "    {\"id\": %d, \"name\": %s, \"buffer\": -1}", i, name)
		} else {
			fmt.Fprintf(&b, "    {\"id\": %d, \"name\": %s, \"buffer\": %d, \"chunk\": %d, \"offset\": %d, \"size\": %d}", i, name, p.Buffer, p.Chunk, p.Offset, p.Size)
		}
		b.WriteString(sep(i, len(f.Tensors)))
	}
	b.WriteString("  ]\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}

func sep(i, n int) string {
	if i < n-1 {
		return ",\n"
	}
	return "\n"
}
