//go:build amd64 && !purego

package vec

// dotQ8Rx4IAVX512 is the repacked q8_0 decode dot (q8r512_amd64.s): groups
// groups of four rows repacked by Interleave4Q8_0 (nb blocks a row, a
// multiple of Q8RBlocks) from w against the activation row packed by
// PackQ8_0ForQ8R at y, four results a group from dst on.
//
//go:noescape
func dotQ8Rx4IAVX512(w *byte, groups int, y *byte, nb int, dst *float32)

func dotQ8_0RowsRepacked(dst []float32, w []byte, y, yp []byte, nb int) {
	if !useQ512 {
		dotQ8_0RowsRepackedGo(dst, w, y, nb)
		return
	}
	rs := nb * Q8_0BlockSize
	g := len(dst) / 4
	if g > 0 {
		dotQ8Rx4IAVX512(&w[0], g, &yp[0], nb, &dst[0])
	}
	for r := 4 * g; r < len(dst); r++ {
		dotQ8x1AVX512(&w[r*rs], 0, &y[0], nb, &dst[r])
	}
}

// The q8_0 repacking's moves of whole groups (q8r512_amd64.s): rows in
// ggml's layout at rows, the same repacked at chunks, nc chunks a row.

//go:noescape
func deinterleaveQ8R512(rows *byte, chunks *byte, rowSize int, nc int, groups int)

//go:noescape
func interleaveQ8R512(rows *byte, chunks *byte, rowSize int, nc int, groups int)

// moveQ8Groups repacks (or, with undo, restores) groups whole groups of
// rows of rowSize bytes in assembly where the AVX-512 kernels run (the
// only level at which weights are repacked), reporting whether it did.
func moveQ8Groups(dst, src []byte, rowSize, groups int, undo bool) bool {
	if !useQ512 || groups == 0 {
		return false
	}
	nc := rowSize / (Q8RBlocks * Q8_0BlockSize)
	if undo {
		deinterleaveQ8R512(&dst[0], &src[0], rowSize, nc, groups)
	} else {
		interleaveQ8R512(&src[0], &dst[0], rowSize, nc, groups)
	}
	return true
}
