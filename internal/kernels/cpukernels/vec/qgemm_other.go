//go:build !amd64 || purego

package vec

// useQGemm512 is false: no assembly in this build.
const useQGemm512 = false

func packQ8_0Panel(dst, w []byte, stride, rows, nb int) { packQ8_0PanelGo(dst, w, stride, rows, nb) }

func packQ4_0Panel(dst, w []byte, stride, rows, nb int) { packQ4_0PanelGo(dst, w, stride, rows, nb) }

func qgemmTile(out []float32, p, a []byte, nb int) { qgemmTileGo(out, p, a, nb) }

func quantPackAct(dst []byte, col int, x []float32, c int) int { return 0 }

func quantQ8Row(dst []byte, x []float32) int { return 0 }
