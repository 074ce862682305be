//go:build amd64 && !purego

package vec

import "unsafe"

// useQGemm512 selects the AVX-512 VNNI GEMM tile and panel packing
// (qgemm512_amd64.s): the level of the AVX-512 row dots (F, BW, VL, DQ,
// VBMI, VNNI, F16C). Set once at program start.
var useQGemm512 = useQ512

// qgemmTile512 computes the 8×16 tile of nb blocks into out (128
// float32).
//
//go:noescape
func qgemmTile512(out *float32, p, a *byte, nb int)

// The packers fill nb blocks of a panel from rows weight rows (the rest
// zero) at w, stride bytes apart; mask has the low rows bits set. The
// Full ones take 16 rows only (they load whole rows: no masks).
//
//go:noescape
func packQ8Panel512(dst, w *byte, stride, mask, nb int)

//go:noescape
func packQ8Full512(dst, w *byte, stride, mask, nb int)

//go:noescape
func packQ4Full512(dst, w *byte, stride, mask, nb int)

//go:noescape
func packQ4Panel512(dst, w *byte, stride, mask, nb int)

//go:noescape
func quantPackQ8Act512(dst *byte, col int, x *float32, nb, negc int) int

// quantPackAct quantizes and packs x's leading blocks up to the first
// that holds a NaN or an infinity, returning how many it did (none
// without the assembly).
func quantPackAct(dst []byte, col int, x []float32, c int) int {
	if !useQGemm512 || len(x) < QK {
		return 0
	}
	return quantPackQ8Act512(pb(dst), col, unsafe.SliceData(x), len(x)/QK, -c)
}

func qgemmTile(out []float32, p, a []byte, nb int) {
	if useQGemm512 {
		qgemmTile512(unsafe.SliceData(out), pb(p), pb(a), nb)
		return
	}
	qgemmTileGo(out, p, a, nb)
}

func packQ8_0Panel(dst, w []byte, stride, rows, nb int) {
	if useQGemm512 && rows == QGemmRows {
		packQ8Full512(pb(dst), pb(w), stride, 1<<rows-1, nb)
		return
	}
	if useQGemm512 {
		packQ8Panel512(pb(dst), pb(w), stride, 1<<rows-1, nb)
		return
	}
	packQ8_0PanelGo(dst, w, stride, rows, nb)
}

func packQ4_0Panel(dst, w []byte, stride, rows, nb int) {
	if useQGemm512 && rows == QGemmRows {
		packQ4Full512(pb(dst), pb(w), stride, 1<<rows-1, nb)
		return
	}
	if useQGemm512 {
		packQ4Panel512(pb(dst), pb(w), stride, 1<<rows-1, nb)
		return
	}
	packQ4_0PanelGo(dst, w, stride, rows, nb)
}

//go:noescape
func quantQ8Row512(dst *byte, x *float32, nb int) int

// quantQ8Row quantizes x's leading q8_0 blocks into dst up to the first
// that holds a NaN or an infinity, returning how many it did (none
// without the assembly).
func quantQ8Row(dst []byte, x []float32) int {
	if !useQGemm512 || len(x) < QK {
		return 0
	}
	return quantQ8Row512(pb(dst), unsafe.SliceData(x), len(x)/QK)
}
