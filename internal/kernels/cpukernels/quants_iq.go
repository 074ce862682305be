package cpukernels

import (
	"encoding/binary"
	"math"
)

// This file holds the dequantizers of ggml's remaining block types: the
// i-quants (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m: indices
// into fixed grids of 8- or 4-value patterns, with sign bits and block
// scales; iq4_nl, iq4_xs: 4-bit indices into 16 non-linear levels), the
// ternary tq1_0 and tq2_0, the fp4 formats mxfp4 (E2M1 values with a
// power-of-two E8M0 scale per 32) and nvfp4 (E2M1 with an unsigned E4M3
// scale per 16), and the sign/2-bit types q1_0 and q2_0. Each follows
// ggml's dequantize_row_* in layout, order and float precision; the grids
// and level tables (iqtables.go) are ggml's format data. Their quantizers
// are in quants_iq_quant.go.

// Bytes per block, as ggml-common.h lays the blocks out.
const (
	BlockIQ2_XXSSize = 2 + QKK/4               // d, qs[32] (uint16)
	BlockIQ2_XSSize  = 2 + QKK/4 + QKK/32      // d, qs[32] (uint16), scales[8]
	BlockIQ2_SSize   = 2 + QKK/4 + QKK/16      // d, qs[64] (indices, then signs), qh[8], scales[8]
	BlockIQ3_XXSSize = 2 + 3*QKK/8             // d, qs[64] (indices), scales and signs (8 uint32)
	BlockIQ3_SSize   = 2 + 13*QKK/32 + QKK/64  // d, qs[64], qh[8], signs[32], scales[4]
	BlockIQ1_SSize   = 2 + QKK/8 + QKK/16      // d, qs[32], qh[8] (uint16)
	BlockIQ1_MSize   = QKK/8 + QKK/16 + QKK/32 // qs[32], qh[16], scales[8] (holding d)
	BlockIQ4_NLSize  = 2 + QK/2                // d, qs[16]
	BlockIQ4_XSSize  = 2 + 2 + QKK/64 + QKK/2  // d, scales_h, scales_l[4], qs[128]
	BlockTQ1_0Size   = 48 + 4 + 2              // qs[48] (5 trits a byte), qh[4] (4 trits a byte), d
	BlockTQ2_0Size   = QKK/4 + 2               // qs[64] (2 bits an element), d
	BlockMXFP4Size   = 1 + QK/2                // e (E8M0), qs[16]
	BlockNVFP4Size   = 4 + 32                  // d[4] (UE4M3), qs[32]
	BlockQ1_0Size    = 2 + 128/8               // d, qs[16] (sign bits)
	BlockQ2_0Size    = 2 + 64/4                // d, qs[16] (2 bits an element)
)

// Elements per block of the types whose blocks are neither 32 nor 256.
const (
	qkNVFP4 = 64
	qkQ1_0  = 128
	qkQ2_0  = 64
)

// iq1sDelta is ggml's IQ1S_DELTA (and IQ1M_DELTA): the shift of the
// ternary grid values of iq1_s and iq1_m.
const iq1sDelta = 0.125

// signed returns v negated where bit j of signs is set, as ggml's
// (signs & kmask_iq2xs[j] ? -1.f : 1.f) factor.
func signed(v float32, signs byte, j int) float32 {
	if signs>>uint(j)&1 != 0 {
		return -v
	}
	return v
}

// gridByte is byte j (little-endian) of a grid entry.
func gridByte(g uint64, j int) float32 { return float32(uint8(g >> (8 * uint(j)))) }

// DequantizeRowIQ2_XXS expands iq2_xxs super-blocks into y: per 32
// elements, four byte indices into iq2xxsGrid, then a uint32 of four 7-bit
// sign-pattern indices and a 4-bit scale.
func DequantizeRowIQ2_XXS(src []byte, y []float32) error {
	nb, err := checkBlocks("iq2_xxs", len(y), len(src), QKK, BlockIQ2_XXSSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ2_XXSSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		for ib := 0; ib < QKK/32; ib++ {
			q := blk[2+8*ib:]
			aux1 := binary.LittleEndian.Uint32(q[4:])
			db := d * (0.5 + float32(aux1>>28)) * 0.25
			for l := 0; l < 4; l++ {
				g := iq2xxsGrid[q[l]]
				signs := ksignsIQ2XS[(aux1>>(7*uint(l)))&127]
				for j := 0; j < 8; j++ {
					ys[32*ib+8*l+j] = signed(db*gridByte(g, j), signs, j)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ2_XS expands iq2_xs super-blocks into y: uint16s of a
// 9-bit iq2xsGrid index and a 7-bit sign-pattern index, two 4-bit scales
// per 32 elements.
func DequantizeRowIQ2_XS(src []byte, y []float32) error {
	nb, err := checkBlocks("iq2_xs", len(y), len(src), QKK, BlockIQ2_XSSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ2_XSSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		scales := blk[2+QKK/4:]
		for ib := 0; ib < QKK/32; ib++ {
			db := [2]float32{d * (0.5 + float32(scales[ib]&0xf)) * 0.25, d * (0.5 + float32(scales[ib]>>4)) * 0.25}
			for l := 0; l < 4; l++ {
				q := binary.LittleEndian.Uint16(blk[2+2*(4*ib+l):])
				g := iq2xsGrid[q&511]
				signs := ksignsIQ2XS[q>>9]
				for j := 0; j < 8; j++ {
					ys[32*ib+8*l+j] = signed(db[l/2]*gridByte(g, j), signs, j)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ2_S expands iq2_s super-blocks into y: 10-bit iq2sGrid
// indices (a byte of qs and two bits of qh), explicit sign bytes, two
// 4-bit scales per 32 elements.
func DequantizeRowIQ2_S(src []byte, y []float32) error {
	nb, err := checkBlocks("iq2_s", len(y), len(src), QKK, BlockIQ2_SSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ2_SSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		qs, signs := blk[2:], blk[2+QKK/8:]
		qh, scales := blk[2+QKK/4:], blk[2+QKK/4+QKK/32:]
		for ib := 0; ib < QKK/32; ib++ {
			db := [2]float32{d * (0.5 + float32(scales[ib]&0xf)) * 0.25, d * (0.5 + float32(scales[ib]>>4)) * 0.25}
			for l := 0; l < 4; l++ {
				idx := int(qs[4*ib+l]) | int(qh[ib])<<(8-2*uint(l))&0x300
				g := iq2sGrid[idx]
				for j := 0; j < 8; j++ {
					ys[32*ib+8*l+j] = signed(db[l/2]*gridByte(g, j), signs[4*ib+l], j)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ3_XXS expands iq3_xxs super-blocks into y: byte indices
// into iq3xxsGrid (4 values each), then per 32 elements a uint32 of four
// sign-pattern indices and a 4-bit scale.
func DequantizeRowIQ3_XXS(src []byte, y []float32) error {
	nb, err := checkBlocks("iq3_xxs", len(y), len(src), QKK, BlockIQ3_XXSSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ3_XXSSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		qs, ss := blk[2:], blk[2+QKK/4:]
		for ib := 0; ib < QKK/32; ib++ {
			aux := binary.LittleEndian.Uint32(ss[4*ib:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := 0; l < 4; l++ {
				signs := ksignsIQ2XS[(aux>>(7*uint(l)))&127]
				g1, g2 := iq3xxsGrid[qs[8*ib+2*l]], iq3xxsGrid[qs[8*ib+2*l+1]]
				o := ys[32*ib+8*l:]
				for j := 0; j < 4; j++ {
					o[j] = signed(db*gridByte(uint64(g1), j), signs, j)
					o[j+4] = signed(db*gridByte(uint64(g2), j), signs, j+4)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ3_S expands iq3_s super-blocks into y: 9-bit iq3sGrid
// indices (a byte of qs and a bit of qh), explicit sign bytes, a 4-bit
// odd scale per 32 elements.
func DequantizeRowIQ3_S(src []byte, y []float32) error {
	nb, err := checkBlocks("iq3_s", len(y), len(src), QKK, BlockIQ3_SSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ3_SSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		qs, qh := blk[2:], blk[2+QKK/4:]
		signs, scales := blk[2+QKK/4+QKK/32:], blk[2+QKK/4+QKK/32+QKK/8:]
		for ib := 0; ib < QKK/32; ib++ {
			sc := scales[ib/2] >> (4 * uint(ib%2)) & 0xf
			db := d * float32(1+2*int(sc))
			h := int(qh[ib])
			for l := 0; l < 4; l++ {
				g1 := iq3sGrid[int(qs[8*ib+2*l])|(h<<(8-2*uint(l)))&256]
				g2 := iq3sGrid[int(qs[8*ib+2*l+1])|(h<<(7-2*uint(l)))&256]
				s := signs[4*ib+l]
				o := ys[32*ib+8*l:]
				for j := 0; j < 4; j++ {
					o[j] = signed(db*gridByte(uint64(g1), j), s, j)
					o[j+4] = signed(db*gridByte(uint64(g2), j), s, j+4)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ1_S expands iq1_s super-blocks into y: 11-bit indices
// into the ternary iq1sGrid (a byte of qs and three bits of the uint16
// qh), per 32 elements a 3-bit odd scale and the sign of a ±1/8 shift.
func DequantizeRowIQ1_S(src []byte, y []float32) error {
	nb, err := checkBlocks("iq1_s", len(y), len(src), QKK, BlockIQ1_SSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ1_SSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		qs := blk[2:]
		for ib := 0; ib < QKK/32; ib++ {
			qh := binary.LittleEndian.Uint16(blk[2+QKK/8+2*ib:])
			dl := d * float32(2*((qh>>12)&7)+1)
			delta := float32(iq1sDelta)
			if qh&0x8000 != 0 {
				delta = -iq1sDelta
			}
			for l := 0; l < 4; l++ {
				g := iq1sGrid[int(qs[4*ib+l])|int((qh>>(3*uint(l)))&7)<<8]
				for j := 0; j < 8; j++ {
					ys[32*ib+8*l+j] = dl * (float32(int8(g>>(8*uint(j)))) + delta)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ1_M expands iq1_m super-blocks into y: iq1sGrid indices
// as iq1_s (three high bits and the shift sign per 8 elements in qh), two
// 3-bit scales per 32 elements, and the super-block's f16 scale spread
// over the top nibbles of the four scale words.
func DequantizeRowIQ1_M(src []byte, y []float32) error {
	nb, err := checkBlocks("iq1_m", len(y), len(src), QKK, BlockIQ1_MSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ1_MSize:], y[i*QKK:(i+1)*QKK]
		var sc [4]uint16
		for k := range sc {
			sc[k] = binary.LittleEndian.Uint16(blk[QKK/8+QKK/16+2*k:])
		}
		d := F16ToF32(sc[0]>>12 | (sc[1]>>8)&0x00f0 | (sc[2]>>4)&0x0f00 | sc[3]&0xf000)
		qs, qh := blk, blk[QKK/8:]
		for ib := 0; ib < QKK/32; ib++ {
			s := sc[ib/2] >> (6 * uint(ib%2))
			dl := [2]float32{d * float32(2*(s&7)+1), d * float32(2*((s>>3)&7)+1)}
			h0, h1 := int(qh[2*ib]), int(qh[2*ib+1])
			q := qs[4*ib:]
			idx := [4]int{int(q[0]) | (h0<<8)&0x700, int(q[1]) | (h0<<4)&0x700, int(q[2]) | (h1<<8)&0x700, int(q[3]) | (h1<<4)&0x700}
			hb := [4]int{h0 & 0x08, h0 & 0x80, h1 & 0x08, h1 & 0x80}
			for l := 0; l < 4; l++ {
				delta := float32(iq1sDelta)
				if hb[l] != 0 {
					delta = -iq1sDelta
				}
				g := iq1sGrid[idx[l]]
				for j := 0; j < 8; j++ {
					ys[32*ib+8*l+j] = dl[l/2] * (float32(int8(g>>(8*uint(j)))) + delta)
				}
			}
		}
	}
	return nil
}

// DequantizeRowIQ4_NL expands iq4_nl blocks into y: d·kvaluesIQ4NL[q],
// element j in the low nibble of byte j, element j+16 in its high nibble.
func DequantizeRowIQ4_NL(src []byte, y []float32) error {
	nb, err := checkBlocks("iq4_nl", len(y), len(src), QK, BlockIQ4_NLSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ4_NLSize:], y[i*QK:(i+1)*QK]
		d := getF16(blk)
		nlRows(ys, blk[2:], d, &kvaluesIQ4NL)
	}
	return nil
}

// nlRows writes the 32 values of 16 bytes of nibble indices into the
// level table kv, scaled by d: d·kv[q], low nibbles first.
func nlRows(ys []float32, qs []byte, d float32, kv *[16]int8) {
	for j := 0; j < 16; j++ {
		ys[j] = d * float32(kv[qs[j]&0xf])
		ys[j+16] = d * float32(kv[qs[j]>>4])
	}
}

// DequantizeRowIQ4_XS expands iq4_xs super-blocks into y: iq4_nl's levels
// with a 6-bit scale (minus 32) per 32 elements, its low nibble in
// scales_l and two high bits in scales_h.
func DequantizeRowIQ4_XS(src []byte, y []float32) error {
	nb, err := checkBlocks("iq4_xs", len(y), len(src), QKK, BlockIQ4_XSSize)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockIQ4_XSSize:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk)
		sh := binary.LittleEndian.Uint16(blk[2:])
		for ib := 0; ib < QKK/32; ib++ {
			ls := int(blk[4+ib/2]>>(4*uint(ib%2)))&0xf | int((sh>>(2*uint(ib)))&3)<<4
			dl := d * float32(ls-32)
			nlRows(ys[32*ib:], blk[8+16*ib:], dl, &kvaluesIQ4NL)
		}
	}
	return nil
}

// trit is the value (0, 1 or 2) of the leading base-3 digit of a tq1_0
// byte q scaled by 3^n, as ggml's ((uint16_t)(uint8_t)(q·3^n)·3)>>8.
func trit(q byte, pow byte) int { return int(uint16(q*pow)*3>>8) - 1 }

// DequantizeRowTQ1_0 expands tq1_0 super-blocks into y: five base-3 digits
// per byte of qs (stored as a fixed-point fraction of 3^5), four per byte
// of qh, times d.
func DequantizeRowTQ1_0(src []byte, y []float32) error {
	nb, err := checkBlocks("tq1_0", len(y), len(src), QKK, BlockTQ1_0Size)
	if err != nil {
		return err
	}
	pow3 := [5]byte{1, 3, 9, 27, 81}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockTQ1_0Size:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk[52:])
		k := 0
		for n := 0; n < 5; n++ {
			for m := 0; m < 32; m++ {
				ys[k] = float32(trit(blk[m], pow3[n])) * d
				k++
			}
		}
		for n := 0; n < 5; n++ {
			for m := 0; m < 16; m++ {
				ys[k] = float32(trit(blk[32+m], pow3[n])) * d
				k++
			}
		}
		for n := 0; n < 4; n++ {
			for j := 0; j < 4; j++ {
				ys[k] = float32(trit(blk[48+j], pow3[n])) * d
				k++
			}
		}
	}
	return nil
}

// DequantizeRowTQ2_0 expands tq2_0 super-blocks into y: 2-bit codes minus
// one, times d; byte m of each 32 holds elements m, m+32, m+64, m+96.
func DequantizeRowTQ2_0(src []byte, y []float32) error {
	nb, err := checkBlocks("tq2_0", len(y), len(src), QKK, BlockTQ2_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockTQ2_0Size:], y[i*QKK:(i+1)*QKK]
		d := getF16(blk[64:])
		for j := 0; j < 64; j += 32 {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					ys[4*j+32*l+m] = float32(int(blk[j+m]>>(2*uint(l))&3)-1) * d
				}
			}
		}
	}
	return nil
}

// e8m0Half is ggml's GGML_E8M0_TO_FP32_HALF: half of the power of two
// 2^(e-127) that an E8M0 byte encodes.
func e8m0Half(e byte) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// ue4m3ToF32 is ggml's ggml_ue4m3_to_fp32: half the value of an unsigned
// E4M3 byte (the top bit is ignored; 0 and 0x7f are zero).
func ue4m3ToF32(x byte) float32 {
	if x == 0 || x == 0x7f {
		return 0
	}
	exp, man := int(x>>3)&0xf, int(x&7)
	var raw float32
	if exp == 0 {
		raw = float32(math.Ldexp(float64(man), -9))
	} else {
		raw = float32(math.Ldexp(float64(1+float32(man)/8), exp-7))
	}
	return raw * 0.5
}

// DequantizeRowMXFP4 expands mxfp4 blocks into y: doubled E2M1 levels
// (kvaluesFP4) times half the block's E8M0 scale.
func DequantizeRowMXFP4(src []byte, y []float32) error {
	nb, err := checkBlocks("mxfp4", len(y), len(src), QK, BlockMXFP4Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockMXFP4Size:], y[i*QK:(i+1)*QK]
		d := e8m0Half(blk[0])
		for j := 0; j < QK/2; j++ {
			ys[j] = float32(kvaluesFP4[blk[1+j]&0xf]) * d
			ys[j+QK/2] = float32(kvaluesFP4[blk[1+j]>>4]) * d
		}
	}
	return nil
}

// DequantizeRowNVFP4 expands nvfp4 blocks of 64 into y: per 16 elements,
// doubled E2M1 levels times half the UE4M3 scale.
func DequantizeRowNVFP4(src []byte, y []float32) error {
	nb, err := checkBlocks("nvfp4", len(y), len(src), qkNVFP4, BlockNVFP4Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockNVFP4Size:], y[i*qkNVFP4:(i+1)*qkNVFP4]
		for s := 0; s < 4; s++ {
			d := ue4m3ToF32(blk[s])
			q, o := blk[4+8*s:], ys[16*s:]
			for j := 0; j < 8; j++ {
				o[j] = float32(kvaluesFP4[q[j]&0xf]) * d
				o[j+8] = float32(kvaluesFP4[q[j]>>4]) * d
			}
		}
	}
	return nil
}

// DequantizeRowQ1_0 expands q1_0 blocks of 128 into y: +d where the
// element's bit is set, -d where it is clear.
func DequantizeRowQ1_0(src []byte, y []float32) error {
	nb, err := checkBlocks("q1_0", len(y), len(src), qkQ1_0, BlockQ1_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ1_0Size:], y[i*qkQ1_0:(i+1)*qkQ1_0]
		d := getF16(blk)
		for j := range ys {
			if blk[2+j/8]>>uint(j%8)&1 != 0 {
				ys[j] = d
			} else {
				ys[j] = -d
			}
		}
	}
	return nil
}

// DequantizeRowQ2_0 expands q2_0 blocks of 64 into y: (q-1)·d for the
// 2-bit codes, four to a byte from the low bits up.
func DequantizeRowQ2_0(src []byte, y []float32) error {
	nb, err := checkBlocks("q2_0", len(y), len(src), qkQ2_0, BlockQ2_0Size)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		blk, ys := src[i*BlockQ2_0Size:], y[i*qkQ2_0:(i+1)*qkQ2_0]
		d := getF16(blk)
		for j := range ys {
			ys[j] = float32(int(blk[2+j/4]>>(2*uint(j%4))&3)-1) * d
		}
	}
	return nil
}
