package vec

import (
	"encoding/binary"
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// The quantized GEMM tile: QGemmRows q4_0 or q8_0 weight rows times
// QGemmCols q8_0 activation rows, over packed copies of both (see
// RATIONALE.md, "Quantized GEMM: panels packed per node").
//
// A weight panel holds, per block of 32 elements, the rows' scales as
// float32 (64 bytes), then the quants as unsigned bytes (q4_0: the raw
// nibble, q+8; q8_0: q+128) interleaved four at a time: byte
// 64 + 64·j + 4·r + t is element 4j+t of row r. One 64-byte load is then
// four elements of each of 16 rows, and VPDPBUSD with a broadcast of four
// activation bytes adds their products into one 32-bit lane per row.
//
// An activation group holds, per block, the 32 quants of each of its 8
// rows (256 bytes), their scales as float32 (32 bytes) and -c·Σq per row
// as int32 (32 bytes), c being the weights' offset (QGemmOffsetQ4_0 or
// QGemmOffsetQ8_0), so a lane that starts from -c·Σq ends at the exact
// Σ q_w·q_y of the block. Each block then adds float32(Σ)·(d_w·d_y) to
// the row's float32 sum, as ggml's vec_dot does; only the order of those
// float additions differs from the row dots.
const (
	// QGemmRows is the number of weight rows in a panel.
	QGemmRows = 16
	// QGemmCols is the number of activation rows in a group.
	QGemmCols = 8
	// QGemmOffsetQ4_0 is the offset of q4_0's packed weights (nibble = q+8).
	QGemmOffsetQ4_0 = 8
	// QGemmOffsetQ8_0 is the offset of q8_0's packed weights (q+128).
	QGemmOffsetQ8_0 = 128

	qgPanelBlock = 4*QGemmRows + QGemmRows*QK // 576 bytes
	qgActBlock   = QGemmCols*QK + 8*QGemmCols // 320 bytes
)

// QGemmPanelBytes is the size of a weight panel of nb blocks.
func QGemmPanelBytes(nb int) int { return nb * qgPanelBlock }

// QGemmActBytes is the size of an activation group of nb blocks.
func QGemmActBytes(nb int) int { return nb * qgActBlock }

// QGemmAVX512 reports whether the quantized GEMM tile and the panel
// packing run in assembly (AVX-512 VNNI) at the level in use; otherwise
// they run portable Go, slower than the row dots, and callers should use
// those.
func QGemmAVX512() bool { return useQGemm512 }

func checkPanel(dst, w []byte, stride, rows, nb, bs int) error {
	switch {
	case nb <= 0 || rows <= 0 || rows > QGemmRows || stride < nb*bs:
		return fmt.Errorf("%w: panel of %d rows of %d blocks with stride %d", ErrShape, rows, nb, stride)
	case len(dst) < QGemmPanelBytes(nb):
		return fmt.Errorf("%w: panel of %d bytes for %d blocks", ErrShape, len(dst), nb)
	case (rows-1) > (len(w)-nb*bs)/stride || len(w) < nb*bs:
		return fmt.Errorf("%w: %d weight rows of stride %d in %d bytes", ErrShape, rows, stride, len(w))
	case int64(stride)*(QGemmRows-1) > 1<<31-1-int64(nb*bs):
		return fmt.Errorf("%w: weight stride %d too large for a panel", ErrShape, stride)
	}
	return nil
}

// PackQ8_0Panel packs rows ≤ QGemmRows q8_0 weight rows of nb blocks,
// stride bytes apart in w, into the panel dst (QGemmPanelBytes(nb)
// bytes); rows past rows get zero scales and quants.
func PackQ8_0Panel(dst, w []byte, stride, rows, nb int) error {
	if err := checkPanel(dst, w, stride, rows, nb, Q8_0BlockSize); err != nil {
		return err
	}
	packQ8_0Panel(dst, w, stride, rows, nb)
	return nil
}

// PackQ4_0Panel is PackQ8_0Panel for q4_0 weight rows.
func PackQ4_0Panel(dst, w []byte, stride, rows, nb int) error {
	if err := checkPanel(dst, w, stride, rows, nb, Q4_0BlockSize); err != nil {
		return err
	}
	packQ4_0Panel(dst, w, stride, rows, nb)
	return nil
}

// PackQGemmAct writes the q8_0 activation row y (nb blocks) as row col
// (< QGemmCols) of the activation group dst (QGemmActBytes(nb) bytes),
// for weights of offset c (QGemmOffsetQ4_0 or QGemmOffsetQ8_0). A row of
// a group never written gives meaningless products (which callers drop).
func PackQGemmAct(dst []byte, col int, y []byte, nb, c int) error {
	switch {
	case nb <= 0 || col < 0 || col >= QGemmCols || len(y) < nb*Q8_0BlockSize || len(dst) < QGemmActBytes(nb):
		return fmt.Errorf("%w: activation row %d of %d blocks (%d bytes) into a group of %d bytes", ErrShape, col, nb, len(y), len(dst))
	case c != QGemmOffsetQ4_0 && c != QGemmOffsetQ8_0:
		return fmt.Errorf("%w: weight offset %d", ErrShape, c)
	}
	for b := range nb {
		blk := y[b*Q8_0BlockSize : (b+1)*Q8_0BlockSize]
		g := dst[b*qgActBlock : (b+1)*qgActBlock]
		copy(g[col*QK:(col+1)*QK], blk[2:])
		binary.LittleEndian.PutUint32(g[QGemmCols*QK+4*col:], math.Float32bits(blockScale(blk)))
		binary.LittleEndian.PutUint32(g[QGemmCols*QK+4*QGemmCols+4*col:], uint32(-int32(c)*sumQ8(blk[2:])))
	}
	return nil
}

// QuantizePackQGemmAct quantizes the activation row x (a multiple of QK
// elements) to q8_0 with ggml's CPU quantizer (the bytes of
// cpukernels.QuantizeRowQ8_0CPU) and writes it as row col of the
// activation group dst, as PackQGemmAct of that q8_0 row would.
func QuantizePackQGemmAct(dst []byte, col int, x []float32, c int) error {
	nb := len(x) / QK
	switch {
	case nb == 0 || len(x)%QK != 0 || col < 0 || col >= QGemmCols || len(dst) < QGemmActBytes(nb):
		return fmt.Errorf("%w: activation row %d of %d elements into a group of %d bytes", ErrShape, col, len(x), len(dst))
	case c != QGemmOffsetQ4_0 && c != QGemmOffsetQ8_0:
		return fmt.Errorf("%w: weight offset %d", ErrShape, c)
	}
	var blk [Q8_0BlockSize]byte
	for b := quantPackAct(dst, col, x, c); b < nb; {
		// A block the assembly leaves (NaN or infinity) or every block
		// without it: the portable quantizer, then the packer.
		if err := cpukernels.QuantizeRowQ8_0CPU(x[b*QK:(b+1)*QK], blk[:]); err != nil {
			return err
		}
		if err := PackQGemmAct(dst[b*qgActBlock:], col, blk[:], 1, c); err != nil {
			return err
		}
		b++
		b += quantPackAct(dst[b*qgActBlock:], col, x[b*QK:], c)
	}
	return nil
}

// sumQ8 is the sum of the 32 signed bytes q, eight at a time: flipping
// each byte's sign bit makes it q+128, and the unsigned bytes are summed
// in 16-bit lanes.
func sumQ8(q []byte) int32 {
	var s uint64
	for i := 0; i < QK; i += 8 {
		v := binary.LittleEndian.Uint64(q[i:]) ^ 0x8080808080808080
		s += v&0x00ff00ff00ff00ff + (v>>8)&0x00ff00ff00ff00ff
	}
	s = (s * 0x0001000100010001) >> 48
	return int32(s) - 128*QK
}

// QGemmTile computes the QGemmCols×QGemmRows products of the weight
// panel p with the activation group a (both of nb blocks): out[c·16+r]
// is activation row c times weight row r. out needs 128 elements.
func QGemmTile(out []float32, p, a []byte, nb int) error {
	if nb <= 0 || len(out) < QGemmCols*QGemmRows || len(p) < QGemmPanelBytes(nb) || len(a) < QGemmActBytes(nb) {
		return fmt.Errorf("%w: tile of %d blocks: panel %d bytes, group %d bytes, out %d", ErrShape, nb, len(p), len(a), len(out))
	}
	qgemmTile(out, p, a, nb)
	return nil
}

// packQ8_0PanelGo is the portable PackQ8_0Panel.
func packQ8_0PanelGo(dst, w []byte, stride, rows, nb int) {
	clear(dst[:QGemmPanelBytes(nb)])
	for b := range nb {
		g := dst[b*qgPanelBlock:]
		for r := range rows {
			blk := w[r*stride+b*Q8_0BlockSize:]
			binary.LittleEndian.PutUint32(g[4*r:], math.Float32bits(blockScale(blk)))
			for e := range QK {
				g[4*QGemmRows+64*(e/4)+4*r+e%4] = blk[2+e] ^ 0x80
			}
		}
	}
}

// packQ4_0PanelGo is the portable PackQ4_0Panel.
func packQ4_0PanelGo(dst, w []byte, stride, rows, nb int) {
	clear(dst[:QGemmPanelBytes(nb)])
	for b := range nb {
		g := dst[b*qgPanelBlock:]
		for r := range rows {
			blk := w[r*stride+b*Q4_0BlockSize:]
			binary.LittleEndian.PutUint32(g[4*r:], math.Float32bits(blockScale(blk)))
			for e := range QK / 2 {
				lo, hi := e, e+QK/2
				g[4*QGemmRows+64*(lo/4)+4*r+lo%4] = blk[2+e] & 0xf
				g[4*QGemmRows+64*(hi/4)+4*r+hi%4] = blk[2+e] >> 4
			}
		}
	}
}

// qgemmTileGo is the portable QGemmTile.
func qgemmTileGo(out []float32, p, a []byte, nb int) {
	var acc [QGemmCols * QGemmRows]float32
	for b := range nb {
		pb := p[b*qgPanelBlock : (b+1)*qgPanelBlock]
		ab := a[b*qgActBlock : (b+1)*qgActBlock]
		for c := range QGemmCols {
			dy := math.Float32frombits(binary.LittleEndian.Uint32(ab[QGemmCols*QK+4*c:]))
			corr := int32(binary.LittleEndian.Uint32(ab[QGemmCols*QK+4*QGemmCols+4*c:]))
			for r := range QGemmRows {
				dw := math.Float32frombits(binary.LittleEndian.Uint32(pb[4*r:]))
				s := corr
				for e := range QK {
					s += int32(pb[4*QGemmRows+64*(e/4)+4*r+e%4]) * int32(int8(ab[c*QK+e]))
				}
				acc[c*QGemmRows+r] += float32(s) * (dw * dy)
			}
		}
	}
	copy(out, acc[:])
}

// QuantizeRowQ8_0 is cpukernels.QuantizeRowQ8_0CPU (ggml's x86
// quantize_row_q8_0: d = max|x|/127 as half, quants rounded to nearest,
// ties to even, saturated), the same bytes, with AVX-512 blocks where the
// quantized GEMM's kernels run: the activation row of every q8_0 and q4_0
// product is quantized so, and the portable quantizer took a sixth of a
// small decoder's token (RATIONALE.md, "q8_0 activations quantized with
// AVX-512"). Blocks holding a NaN or an infinity take the portable path.
func QuantizeRowQ8_0(x []float32, dst []byte) error {
	nb := len(x) / QK
	if len(x)%QK != 0 || len(dst) < nb*Q8_0BlockSize {
		return cpukernels.QuantizeRowQ8_0CPU(x, dst) // its error
	}
	for b := quantQ8Row(dst, x); b < nb; {
		if err := cpukernels.QuantizeRowQ8_0CPU(x[b*QK:(b+1)*QK], dst[b*Q8_0BlockSize:(b+1)*Q8_0BlockSize]); err != nil {
			return err
		}
		b++
		b += quantQ8Row(dst[b*Q8_0BlockSize:], x[b*QK:])
	}
	return nil
}
