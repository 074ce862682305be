//go:build !amd64 || purego

package vec

// useQKGemm512 is false: no assembly in this build.
const useQKGemm512 = false

func qkTileQ4_K(out []float32, p, y []byte, ys, nb int) { qkTileQ4_KGo(out, p, y, ys, nb) }

func packQ4_KPanel(dst, w []byte, stride, rows, nb int) { packQ4_KPanelGo(dst, w, stride, rows, nb) }

func packQ6_KPanel(dst, w []byte, stride, rows, nb int) { packQ6_KPanelGo(dst, w, stride, rows, nb) }

func qkTileQ6_K(out []float32, p, y []byte, ys, nb int) { qkTileQ6_KGo(out, p, y, ys, nb) }

func packQ5_KPanel(dst, w []byte, stride, rows, nb int) { packQ5_KPanelGo(dst, w, stride, rows, nb) }
