//go:build !amd64 || purego

package vec

func dotQ8_0RowsRepacked(dst []float32, w []byte, y, _ []byte, nb int) {
	dotQ8_0RowsRepackedGo(dst, w, y, nb)
}

func moveQ8Groups(_, _ []byte, _, _ int, _ bool) bool { return false }
