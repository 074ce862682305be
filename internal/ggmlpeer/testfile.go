package ggmlpeer

import (
	"fmt"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// TestFileSource is a dense source of a TestFileLine case.
type TestFileSource struct {
	Type runtime.Type
	Ne   [4]int64
}

// TestFileLine writes one case of test-backend-ops' --test-file format: a
// generic op (op is ggml's enum ggml_op value) with result type typ and
// shape ne, int32 op parameters, dense sources, and a name ([A-Za-z0-9_]).
func TestFileLine(op int, typ runtime.Type, ne [4]int64, params []int32, srcs []TestFileSource, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %d %d %d %d %d", op, typ, ne[0], ne[1], ne[2], ne[3], len(params))
	for _, p := range params {
		fmt.Fprintf(&b, " %d", p)
	}
	fmt.Fprintf(&b, " %d", len(srcs))
	for _, s := range srcs {
		nb1 := s.Type.RowSize(s.Ne[0])
		fmt.Fprintf(&b, " %d %d %d %d %d %d %d %d %d", s.Type, s.Ne[0], s.Ne[1], s.Ne[2], s.Ne[3],
			s.Type.Size(), nb1, nb1*uint64(s.Ne[1]), nb1*uint64(s.Ne[1]*s.Ne[2]))
	}
	b.WriteString(" " + name)
	return b.String()
}
