package gallocr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
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

// PlanFileBuffer is one entry of a plan file's buffer list: the graph
// file's buffer type index and the byte size of each chunk.
type PlanFileBuffer struct {
	BufferType int      `json:"buffer_type"`
	Chunks     []uint64 `json:"chunks"`
}

// PlanFileTensor is one tensor of a plan file, in graph-file order.
// Buffer is -1 (and the other places absent) for a tensor the plan does
// not place.
type PlanFileTensor struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Buffer int    `json:"buffer"`
	Chunk  int    `json:"chunk"`
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
}

// PlanFileData is a parsed plan/v1 file, as WritePlanFile writes it and
// ggml's plans in the conformance corpus are.
type PlanFileData struct {
	Format  string           `json:"format"`
	Buffers []PlanFileBuffer `json:"buffers"`
	Tensors []PlanFileTensor `json:"tensors"`
}

// planKeys are the keys a plan file may use, spelled exactly.
var planKeys = runtime.JSONFieldNames(reflect.TypeFor[PlanFileData](), reflect.TypeFor[PlanFileBuffer](), reflect.TypeFor[PlanFileTensor]())

// ParsePlanFile parses a plan/v1 file. Keys must be spelled exactly (case
// included) and appear once per object; unknown keys, a wrong format tag,
// trailing data, ids out of order and places that overflow are errors
// wrapping runtime.ErrFormat.
func ParsePlanFile(data []byte) (*PlanFileData, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("plan file: %w: "+format, append([]any{runtime.ErrFormat}, args...)...)
	}
	if err := runtime.CheckJSONKeys(data, planKeys); err != nil {
		return nil, bad("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var pf PlanFileData
	if err := dec.Decode(&pf); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("trailing data after the plan object")
	}
	if pf.Format != PlanFormat {
		return nil, bad("format %q, want %q", pf.Format, PlanFormat)
	}
	for i, t := range pf.Tensors {
		if t.ID != i {
			return nil, bad("tensors[%d] has id %d", i, t.ID)
		}
		if t.Buffer < -1 || t.Buffer >= len(pf.Buffers) {
			return nil, bad("tensor %d %q: buffer %d, have %d", i, t.Name, t.Buffer, len(pf.Buffers))
		}
		if t.Buffer < 0 {
			continue
		}
		chunks := pf.Buffers[t.Buffer].Chunks
		if t.Chunk < 0 || t.Chunk >= len(chunks) {
			return nil, bad("tensor %d %q: chunk %d, buffer %d has %d", i, t.Name, t.Chunk, t.Buffer, len(chunks))
		}
		if t.Offset > chunks[t.Chunk] || t.Size > chunks[t.Chunk]-t.Offset {
			return nil, bad("tensor %d %q: %d bytes at offset %d outside its chunk of %d bytes", i, t.Name, t.Size, t.Offset, chunks[t.Chunk])
		}
	}
	return &pf, nil
}
