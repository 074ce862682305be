//go:build !amd64 || purego

package vec

func lowKSIMD() bool { return false }

func lowKTiles() bool { return false }

func dotQ4_KBest(w, y []byte, nb int) float32 { return dotQ4_K(w, y, nb) }

func dotQ6_KBest(w, y []byte, nb int) float32 { return dotQ6_K(w, y, nb) }

func dotQ5_KBest(w, y []byte, nb int) float32 { return dotQ5_K(w, y, nb) }

func dotQ4_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	matGo(dotQ4_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ6_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	matGo(dotQ6_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ5_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	matGo(dotQ5_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ2_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	matGo(dotQ2_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}

func dotQ3_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	matGo(dotQ3_K, dst, ldd, w, stride, nw, y, ys, ny, nb)
}
