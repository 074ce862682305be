package glsl

import (
	"strings"
	"testing"
)

func TestSources(t *testing.T) {
	names := Names()
	if len(names) == 0 {
		t.Fatal("no kernels embedded")
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			src, err := Source(n)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(src, Version+"\n") {
				t.Error("source does not start with the version line")
			}
			if strings.Contains(src, "#include") {
				t.Error("unexpanded include")
			}
			if !strings.Contains(src, "uniform uint P[64]") {
				t.Error("common.glsl not included")
			}
		})
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source of a missing kernel succeeded")
	}
}
