package vec

import (
	"encoding/binary"
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// The k-quant GEMM tile: QGemmRows q4_K weight rows, packed into a panel,
// times QGemmCols q8_K activation rows read in place (see RATIONALE.md,
// "k-quant GEMM tile").
//
// A q4_K panel holds, per super-block of 256 elements, the 16 rows' d and
// dmin as float32 (64 bytes each), the 8 sub-block scales as int32
// vectors (16 rows each, 512 bytes), the 8 sub-block mins as vectors of
// (m, m) int16 pairs (512 bytes: one VPDPWSSD against a q8_K dword of
// two 16-quant sums adds m·(bsum_2g + bsum_2g+1)), then the quants as
// unsigned bytes (the raw nibbles), per sub-block g 8 vectors of 64
// bytes: byte 64·k + 4·r + t of sub-block g is element 32g + 4k + t of
// row r. Every (weight row, activation row) product is then dotQ4_K's:
// the same exact integer sums per super-block and the same float steps in
// the same order, so the same bits as DotQ4_KRows and DotQ4_KMat.
const (
	qkPanelD      = 0
	qkPanelDmin   = 64
	qkPanelScales = 128
	qkPanelMins   = 640
	qkPanelQuants = 1152
	qkPanelBlock  = qkPanelQuants + 8*QGemmRows*32 // 5248 bytes
)

// A q6_K panel holds, per super-block, the 16 rows' d as float32 (64
// bytes), the 16 group scales as int32 vectors (1024 bytes), the scales
// again as 8 vectors of (s_2k, s_2k+1) int16 pairs (512 bytes), then the
// quants as q+32 (0..63), 4 vectors per group of 16 elements, laid out as
// q4_K's (byte 64·(e/4) + 4·r + e%4 is element e of row r). The offset
// is taken back once per super-block: 32·Σ_g s_g·bsum_g, one VPDPWSSD
// per scale pair; the integer sums are dotQ6_K's exactly.
const (
	q6PanelD      = 0
	q6PanelScales = 64
	q6PanelPairs  = 1088
	q6PanelQuants = 1600
	q6PanelBlock  = q6PanelQuants + QKK*QGemmRows // 5696 bytes
)

// QGemmQ6_KPanelBytes is the size of a q6_K panel of nb super-blocks.
func QGemmQ6_KPanelBytes(nb int) int { return nb * q6PanelBlock }

// PackQ6_KPanel is PackQ4_KPanel for q6_K weights.
func PackQ6_KPanel(dst, w []byte, stride, rows, nb int) error {
	if err := checkPanel(dst, w, stride, rows, nb, Q6_KBlockSize); err != nil {
		return err
	}
	if len(dst) < QGemmQ6_KPanelBytes(nb) {
		return fmt.Errorf("%w: q6_K panel of %d bytes for %d super-blocks", ErrShape, len(dst), nb)
	}
	packQ6_KPanel(dst, w, stride, rows, nb)
	return nil
}

// QGemmQ6_KTile is QGemmQ4_KTile for a q6_K panel: the bits of
// DotQ6_KRows.
func QGemmQ6_KTile(out []float32, p, y []byte, ys, nb int) error {
	if err := checkQKTile(out, p, y, ys, nb, QGemmQ6_KPanelBytes(nb)); err != nil {
		return err
	}
	qkTileQ6_K(out, p, y, ys, nb)
	return nil
}

// checkQKTile checks a k-quant tile's arguments (panel of pbytes).
func checkQKTile(out []float32, p, y []byte, ys, nb, pbytes int) error {
	switch {
	case nb <= 0 || len(out) < QGemmCols*QGemmRows || len(p) < pbytes:
		return fmt.Errorf("%w: k-quant tile of %d super-blocks: panel %d bytes, out %d", ErrShape, nb, len(p), len(out))
	case ys < nb*Q8_KBlockSize || ys > (len(y)-nb*Q8_KBlockSize)/(QGemmCols-1):
		return fmt.Errorf("%w: %d q8_K rows of %d blocks, %d bytes apart, in %d bytes", ErrShape, QGemmCols, nb, ys, len(y))
	}
	return nil
}

// packQ6_KPanelGo is PackQ6_KPanel (arguments checked).
func packQ6_KPanelGo(dst, w []byte, stride, rows, nb int) {
	le := binary.LittleEndian
	clear(dst[:QGemmQ6_KPanelBytes(nb)])
	for b := range nb {
		g := dst[b*q6PanelBlock : (b+1)*q6PanelBlock]
		for r := range rows {
			bw := w[r*stride+b*Q6_KBlockSize : r*stride+(b+1)*Q6_KBlockSize]
			le.PutUint32(g[q6PanelD+4*r:], math.Float32bits(f16(bw[208:])))
			for j := range 16 {
				le.PutUint32(g[q6PanelScales+64*j+4*r:], uint32(int32(int8(bw[192+j]))))
			}
			for k := range 8 {
				le.PutUint16(g[q6PanelPairs+64*k+4*r:], uint16(int16(int8(bw[192+2*k]))))
				le.PutUint16(g[q6PanelPairs+64*k+4*r+2:], uint16(int16(int8(bw[193+2*k]))))
			}
			for n := 0; n < QKK; n += 128 {
				ql, qh := bw[n/2:n/2+64], bw[128+n/4:128+n/4+32]
				for l := range 32 {
					for i, u := range [4]byte{
						ql[l]&0xf | (qh[l]&3)<<4, ql[l+32]&0xf | (qh[l]>>2&3)<<4,
						ql[l]>>4 | (qh[l]>>4&3)<<4, ql[l+32]>>4 | (qh[l]>>6&3)<<4,
					} {
						e := n + 32*i + l
						g[q6PanelQuants+64*(e/4)+4*r+e%4] = u
					}
				}
			}
		}
	}
}

// qkTileQ6_KGo is the portable QGemmQ6_KTile: dotQ6_K's integer sums and
// float step per product, read from the panel.
func qkTileQ6_KGo(out []float32, p, y []byte, ys, nb int) {
	le := binary.LittleEndian
	for c := range QGemmCols {
		for r := range QGemmRows {
			var sum float32
			for b := range nb {
				g := p[b*q6PanelBlock:]
				dy, q8, _ := q8K(y[c*ys+b*Q8_KBlockSize:])
				var isum int32
				for j := range 16 {
					var s int32
					for e := 16 * j; e < 16*j+16; e++ {
						s += (int32(g[q6PanelQuants+64*(e/4)+4*r+e%4]) - 32) * int32(int8(q8[e]))
					}
					isum += s * int32(le.Uint32(g[q6PanelScales+64*j+4*r:]))
				}
				d := math.Float32frombits(le.Uint32(g[q6PanelD+4*r:]))
				sum += float32(float32(d*dy) * float32(isum))
			}
			out[c*QGemmRows+r] = sum
		}
	}
}

// QGemmQ4_KPanelBytes is the size of a q4_K panel of nb super-blocks.
func QGemmQ4_KPanelBytes(nb int) int { return nb * qkPanelBlock }

// QKGemmAVX512 reports whether the k-quant GEMM tile runs in assembly
// (AVX-512 VNNI) at the level in use; otherwise it runs portable Go,
// slower than DotQ4_KMat, and callers should use that.
func QKGemmAVX512() bool { return useQKGemm512 }

// PackQ4_KPanel packs rows ≤ QGemmRows q4_K weight rows of nb
// super-blocks, stride bytes apart in w, into the panel dst
// (QGemmQ4_KPanelBytes(nb) bytes); rows past rows get zero scales and
// quants.
func PackQ4_KPanel(dst, w []byte, stride, rows, nb int) error {
	if err := checkPanel(dst, w, stride, rows, nb, Q4_KBlockSize); err != nil {
		return err
	}
	if len(dst) < QGemmQ4_KPanelBytes(nb) {
		return fmt.Errorf("%w: q4_K panel of %d bytes for %d super-blocks", ErrShape, len(dst), nb)
	}
	packQ4_KPanel(dst, w, stride, rows, nb)
	return nil
}

// QGemmQ4_KTile computes the QGemmCols×QGemmRows products of the q4_K
// panel p (nb super-blocks) with the QGemmCols q8_K rows of nb blocks at
// y, ys bytes apart: out[c·16+r] is activation row c times weight row r,
// the bits of DotQ4_KRows. out needs 128 elements.
func QGemmQ4_KTile(out []float32, p, y []byte, ys, nb int) error {
	if err := checkQKTile(out, p, y, ys, nb, QGemmQ4_KPanelBytes(nb)); err != nil {
		return err
	}
	qkTileQ4_K(out, p, y, ys, nb)
	return nil
}

// PackQ5_KPanel is PackQ4_KPanel for q5_K weights: their panels have
// q4_K's layout (the quants 0..31) and run on QGemmQ5_KTile.
func PackQ5_KPanel(dst, w []byte, stride, rows, nb int) error {
	if err := checkPanel(dst, w, stride, rows, nb, Q5_KBlockSize); err != nil {
		return err
	}
	if len(dst) < QGemmQ4_KPanelBytes(nb) {
		return fmt.Errorf("%w: q5_K panel of %d bytes for %d super-blocks", ErrShape, len(dst), nb)
	}
	packQ5_KPanel(dst, w, stride, rows, nb)
	return nil
}

// QGemmQ5_KPanelBytes is the size of a q5_K panel of nb super-blocks.
func QGemmQ5_KPanelBytes(nb int) int { return QGemmQ4_KPanelBytes(nb) }

// QGemmQ5_KTile is QGemmQ4_KTile for a q5_K panel (the same kernel): the
// bits of DotQ5_KRows.
func QGemmQ5_KTile(out []float32, p, y []byte, ys, nb int) error {
	return QGemmQ4_KTile(out, p, y, ys, nb)
}

// packQ4_KPanelGo is PackQ4_KPanel (arguments checked).
func packQ4_KPanelGo(dst, w []byte, stride, rows, nb int) {
	packK45PanelGo(dst, w, stride, rows, nb, false)
}

// packQ5_KPanelGo is PackQ5_KPanel (arguments checked).
func packQ5_KPanelGo(dst, w []byte, stride, rows, nb int) {
	packK45PanelGo(dst, w, stride, rows, nb, true)
}

// packK45PanelGo packs q4_K or (q5) q5_K rows: q5_K's nibbles sit at 48,
// its fifth bits at 16 (bit 2j of byte l for element 64j+l, bit 2j+1 for
// element 64j+32+l).
func packK45PanelGo(dst, w []byte, stride, rows, nb int, q5 bool) {
	bs, qs := Q4_KBlockSize, 16
	if q5 {
		bs, qs = Q5_KBlockSize, 48
	}
	clear(dst[:QGemmQ4_KPanelBytes(nb)])
	for b := range nb {
		g := dst[b*qkPanelBlock : (b+1)*qkPanelBlock]
		for r := range rows {
			bw := w[r*stride+b*bs : r*stride+(b+1)*bs]
			binary.LittleEndian.PutUint32(g[qkPanelD+4*r:], math.Float32bits(f16(bw)))
			binary.LittleEndian.PutUint32(g[qkPanelDmin+4*r:], math.Float32bits(f16(bw[2:])))
			for j := range 8 {
				s, m := cpukernels.K4ScaleMin(j, bw[4:16])
				binary.LittleEndian.PutUint32(g[qkPanelScales+64*j+4*r:], uint32(s))
				binary.LittleEndian.PutUint32(g[qkPanelMins+64*j+4*r:], uint32(m)*0x10001)
			}
			// Bytes 16+32j+l hold element 64j+l (low nibble, sub-block
			// 2j) and 64j+32+l (high nibble, sub-block 2j+1).
			for j := range 4 {
				lo := g[qkPanelQuants+512*(2*j)+4*r:]
				hi := g[qkPanelQuants+512*(2*j+1)+4*r:]
				q := bw[qs+32*j : qs+32*j+32]
				for k := range 8 {
					v := binary.LittleEndian.Uint32(q[4*k:])
					l, h := v&0x0f0f0f0f, v>>4&0x0f0f0f0f
					if q5 {
						qh := binary.LittleEndian.Uint32(bw[16+4*k:])
						l |= (qh >> (2 * j) & 0x01010101) << 4
						h |= (qh >> (2*j + 1) & 0x01010101) << 4
					}
					binary.LittleEndian.PutUint32(lo[64*k:], l)
					binary.LittleEndian.PutUint32(hi[64*k:], h)
				}
			}
		}
	}
}

// qkTileQ4_KGo is the portable QGemmQ4_KTile: dotQ4_K's integer sums and
// float steps per product, read from the panel.
func qkTileQ4_KGo(out []float32, p, y []byte, ys, nb int) {
	le := binary.LittleEndian
	for c := range QGemmCols {
		for r := range QGemmRows {
			var sum float32
			for b := range nb {
				g := p[b*qkPanelBlock:]
				dy, q8, bs := q8K(y[c*ys+b*Q8_KBlockSize:])
				var isum, summs int32
				for j := range 8 {
					var s int32
					for e := range 32 {
						s += int32(g[qkPanelQuants+512*j+64*(e/4)+4*r+e%4]) * int32(int8(q8[32*j+e]))
					}
					isum += s * int32(le.Uint32(g[qkPanelScales+64*j+4*r:]))
					summs += (bsum(bs, 2*j) + bsum(bs, 2*j+1)) * int32(le.Uint16(g[qkPanelMins+64*j+4*r:]))
				}
				d := math.Float32frombits(le.Uint32(g[qkPanelD+4*r:]))
				dmin := math.Float32frombits(le.Uint32(g[qkPanelDmin+4*r:]))
				sum += float32(float32(d*dy)*float32(isum)) - float32(float32(dmin*dy)*float32(summs))
			}
			out[c*QGemmRows+r] = sum
		}
	}
}
