//go:build !amd64 || purego

package vec

func dotQ8_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	dotQ8_0RowsGo(dst, w, stride, y, nb)
}

func dotQ4_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	dotQ4_0RowsGo(dst, w, stride, y, nb)
}

func dotQ5_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	dotQ5_0RowsGo(dst, w, stride, y, nb)
}

// QDotsAVX512 reports whether the AVX-512 VNNI row dots of q8_0, q4_0,
// q5_0, q4_1 and q5_1 run at the level in use (never in this build).
func QDotsAVX512() bool { return false }

// QDotsSIMD reports whether the row dots of q8_0, q4_0, q5_0, q4_1 and
// q5_1 run in assembly (never in this build).
func QDotsSIMD() bool { return false }

func dotQ4_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	dotQ4_1RowsGo(dst, w, stride, y, nb)
}

func dotQ5_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	dotQ5_1RowsGo(dst, w, stride, y, nb)
}
