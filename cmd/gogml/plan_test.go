package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanUnplaceable: a graph with a tensor no buffer can hold is an
// error naming the tensor with every output of plan (it panicked).
func TestPlanUnplaceable(t *testing.T) {
	files := map[string]string{
		"input of 2^63-4 bytes": `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"x","type":"f32","ne":[2305843009213693951],"op":"NONE","flags":["input"]},
{"name":"y","type":"f32","ne":[2305843009213693951],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`,
		"huge alloc_pad": `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0,"alloc_pad":9223372036854775807}],
"tensors":[{"name":"x","type":"f32","ne":[4],"op":"NONE","flags":["input"]},{"name":"y","type":"f32","ne":[4],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`,
	}
	for name, content := range files {
		path := writeTemp(t, "g.json", content)
		for _, flags := range [][]string{nil, {"-strategy", "optimized"}, {"-stats"}, {"-svg", filepath.Join(t.TempDir(), "m.svg")}} {
			t.Run(name+" "+strings.Join(flags, " "), func(t *testing.T) {
				var out, errb bytes.Buffer
				err := runPlan(append([]string{path}, flags...), &out, &errb)
				if err == nil || !strings.Contains(err.Error(), `tensor "x"`) {
					t.Fatalf("error %v, want one naming tensor x", err)
				}
			})
		}
	}
}

// TestPlanStatsSaturate: four buffers of 2^62 bytes print a saturated
// total, not a wrapped one.
func TestPlanStatsSaturate(t *testing.T) {
	path := writeTemp(t, "g.json", `{"format":"graph/v1","buffer_types":[{"name":"a","alignment":32,"max_size":0},{"name":"b","alignment":32,"max_size":0},{"name":"c","alignment":32,"max_size":0},{"name":"d","alignment":32,"max_size":0}],
"buffers":[0,1,2,3],"tensors":[
{"name":"x0","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x1","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},
{"name":"x2","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x3","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]}],
"leafs":[0,1,2,3],"nodes":[],"leaf_buffer_ids":[0,1,2,3]}`)
	var out, errb bytes.Buffer
	if err := runPlan([]string{path, "-stats"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	total := regexp.MustCompile(`(?m)^\s*total\s+(\S+)\s+(\S+)\s+(\S+)`).FindStringSubmatch(out.String())
	if total == nil || total[1] != ">=2^64" || total[2] != ">=2^64" || total[3] != ">=2^64" {
		t.Fatalf("total row %q, want saturated:\n%s", total, out.String())
	}
}

// TestPlanExampleShowsAGap: the graph make run plans is one where ggml's
// plan is larger than the lower bound (the 3-node example showed none).
func TestPlanExampleShowsAGap(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runPlan([]string{"../../examples/graphs/llama-01.graph.json", "-stats"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*0\s+\S+\s+1\s+(\d+)\s+(\d+)\s+(\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no buffer row:\n%s", out.String())
	}
	g, _ := strconv.ParseUint(m[1], 10, 64)
	b, _ := strconv.ParseUint(m[3], 10, 64)
	if g <= b {
		t.Fatalf("ggml %d bytes, bound %d: no gap to show", g, b)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "plan examples/graphs/llama-01.graph.json") {
		t.Fatal("make run does not plan examples/graphs/llama-01.graph.json")
	}
}

// TestPlanSVGBothStrategies: -svg writes well-formed XML with both
// strategies.
func TestPlanSVGBothStrategies(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "m.svg")
	var out, errb bytes.Buffer
	if err := runPlan([]string{"../../examples/graphs/llama-01.graph.json", "-svg", svg, "-strategy", "optimized"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
	}
	s := string(data)
	if o, g := strings.Index(s, "optimized strategy"), strings.Index(s, "ggml strategy"); o < 0 || g < 0 || o > g {
		t.Fatal("the SVG does not draw the chosen strategy above the other")
	}
}
