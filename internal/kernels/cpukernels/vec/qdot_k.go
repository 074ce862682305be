package vec

import (
	"encoding/binary"
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// This file holds the row dots of the block types besides q4_0 and q8_0,
// in portable Go, each the integer-exact sum of ggml's vec_dot for the pair
// (weights, quantized activations) with the block scales applied once per
// block (per super-block for the k-quants):
//
//	q4_1·q8_1, q5_1·q8_1   Σ d_w·d_y·Σq_w·q_y + m_w·s_y
//	q5_0·q8_0              Σ d_w·d_y·Σq_w·q_y
//	q2_K..q6_K·q8_K        Σ d_w·d_y·Σ_g scale_g·Σq_w·q_y − dmin_w·d_y·Σ_g min_g·bsum_g
//
// Every kernel takes nb blocks (super-blocks) of one activation row y and
// len(dst) weight rows starting at w[r*stride].

// Block sizes in bytes (see cpukernels for the layouts).
const (
	// QKK is the number of elements of a k-quant super-block.
	QKK = 256
	// Q4_1BlockSize and the following are the bytes of one block.
	Q4_1BlockSize = 20
	Q5_0BlockSize = 22
	Q5_1BlockSize = 24
	Q8_1BlockSize = 36
	Q2_KBlockSize = 84
	Q3_KBlockSize = 110
	Q4_KBlockSize = 144
	Q5_KBlockSize = 176
	Q6_KBlockSize = 210
	Q8_KBlockSize = 292
)

// DotQ4_1Rows sets dst[r] to the dot of the q4_1 weight row at w[r*stride]
// with the q8_1 row y, nb blocks each (ggml's vec_dot_q4_1_q8_1).
func DotQ4_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return rowsDotN(Q4_1BlockSize, Q8_1BlockSize, dotQ4_1Rows, dst, w, stride, y, nb) // qdot_amd64.go, qdot_other.go
}

// DotQ5_0Rows is DotQ4_1Rows for q5_0 weights and a q8_0 row.
func DotQ5_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return rowsDotN(Q5_0BlockSize, Q8_0BlockSize, dotQ5_0Rows, dst, w, stride, y, nb) // qdot_amd64.go, qdot_other.go
}

// DotQ5_1Rows is DotQ4_1Rows for q5_1 weights and a q8_1 row.
func DotQ5_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return rowsDotN(Q5_1BlockSize, Q8_1BlockSize, dotQ5_1Rows, dst, w, stride, y, nb) // qdot_amd64.go, qdot_other.go
}

// DotQ2_KRows is DotQ4_1Rows for q2_K weights and a q8_K row, nb
// super-blocks each.
func DotQ2_KRows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return kRows(Q2_KBlockSize, dotQ2_KMat, dst, w, stride, y, nb)
}

// DotQ3_KRows is DotQ2_KRows for q3_K weights.
func DotQ3_KRows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return kRows(Q3_KBlockSize, dotQ3_KMat, dst, w, stride, y, nb)
}

// DotQ4_KRows is DotQ2_KRows for q4_K weights.
func DotQ4_KRows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return kRows(Q4_KBlockSize, dotQ4_KMat, dst, w, stride, y, nb)
}

// DotQ5_KRows is DotQ2_KRows for q5_K weights.
func DotQ5_KRows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return kRows(Q5_KBlockSize, dotQ5_KMat, dst, w, stride, y, nb)
}

// DotQ6_KRows is DotQ2_KRows for q6_K weights.
func DotQ6_KRows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	return kRows(Q6_KBlockSize, dotQ6_KMat, dst, w, stride, y, nb)
}

// DotQ2_KMat is DotQ4_KMat for q2_K weights.
func DotQ2_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error {
	if err := checkMat(len(dst), ldd, len(w), stride, nw, len(y), ys, ny, nb, Q2_KBlockSize); err != nil || nw == 0 || ny == 0 {
		return err
	}
	dotQ2_KMat(dst, ldd, w, stride, nw, y, ys, ny, nb)
	return nil
}

// DotQ3_KMat is DotQ4_KMat for q3_K weights.
func DotQ3_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error {
	if err := checkMat(len(dst), ldd, len(w), stride, nw, len(y), ys, ny, nb, Q3_KBlockSize); err != nil || nw == 0 || ny == 0 {
		return err
	}
	dotQ3_KMat(dst, ldd, w, stride, nw, y, ys, ny, nb)
	return nil
}

// LowKQuantsSIMD reports whether DotQ2_KRows, DotQ3_KRows and their Mat
// forms run SIMD kernels at the level in use (else portable Go, slower
// than widening the weights into the f32 GEMM).
func LowKQuantsSIMD() bool { return lowKSIMD() }

// LowKQuantsTiles reports whether those SIMD kernels are the AVX-512
// tiles, which reuse each unpacked weight super-block for several
// activation rows (the AVX2 row kernels do not).
func LowKQuantsTiles() bool { return lowKTiles() }

// DotQ4_KMat sets dst[c*ldd+r] to the dot of the q4_K weight row at
// w[r*stride] with the q8_K activation row at y[c*ys], nb super-blocks
// each, for r < nw and c < ny: the products of DotQ4_KRows (the same
// bits) for a tile of weight rows and activation rows, which the SIMD
// kernels run with each weight super-block unpacked once for several
// activation rows.
func DotQ4_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error {
	if err := checkMat(len(dst), ldd, len(w), stride, nw, len(y), ys, ny, nb, Q4_KBlockSize); err != nil || nw == 0 || ny == 0 {
		return err
	}
	dotQ4_KMat(dst, ldd, w, stride, nw, y, ys, ny, nb)
	return nil
}

// DotQ5_KMat is DotQ4_KMat for q5_K weights.
func DotQ5_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error {
	if err := checkMat(len(dst), ldd, len(w), stride, nw, len(y), ys, ny, nb, Q5_KBlockSize); err != nil || nw == 0 || ny == 0 {
		return err
	}
	dotQ5_KMat(dst, ldd, w, stride, nw, y, ys, ny, nb)
	return nil
}

// DotQ6_KMat is DotQ4_KMat for q6_K weights.
func DotQ6_KMat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error {
	if err := checkMat(len(dst), ldd, len(w), stride, nw, len(y), ys, ny, nb, Q6_KBlockSize); err != nil || nw == 0 || ny == 0 {
		return err
	}
	dotQ6_KMat(dst, ldd, w, stride, nw, y, ys, ny, nb)
	return nil
}

// checkMat checks the arguments of a DotQ*_KMat: nw weight rows of nb
// super-blocks of wbs bytes, stride apart in lw bytes; ny q8_K rows ys
// apart in ly bytes; results ldd apart in ld floats.
func checkMat(ld, ldd, lw, stride, nw, ly, ys, ny, nb, wbs int) error {
	if nw < 0 || ny < 0 {
		return fmt.Errorf("%w: %d weight rows by %d activation rows", ErrShape, nw, ny)
	}
	if nw == 0 || ny == 0 {
		return nil
	}
	if err := checkQRowsY(nw, lw, stride, ly, nb, wbs, Q8_KBlockSize); err != nil {
		return err
	}
	switch {
	case ys < nb*Q8_KBlockSize || (ny-1) > (ly-nb*Q8_KBlockSize)/ys:
		return fmt.Errorf("%w: %d activation rows of stride %d in %d bytes", ErrShape, ny, ys, ly)
	case ldd < nw || (ny-1) > (ld-nw)/ldd || ld < nw:
		return fmt.Errorf("%w: %d×%d results with stride %d in %d floats", ErrShape, ny, nw, ldd, ld)
	}
	return nil
}

// matGo is DotQ*_KMat on a one-pair dot.
func matGo(one func(w, y []byte, nb int) float32, dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	for c := 0; c < ny; c++ {
		yc := y[c*ys : c*ys+nb*Q8_KBlockSize]
		for r := 0; r < nw; r++ {
			dst[c*ldd+r] = one(w[r*stride:], yc, nb)
		}
	}
}

// kRows is a DotQ*_KRows on the tile product mat of its type.
func kRows(wbs int, mat func([]float32, int, []byte, int, int, []byte, int, int, int), dst []float32, w []byte, stride int, y []byte, nb int) error {
	if err := checkRows(len(dst), len(w), stride, len(y), nb, wbs, Q8_KBlockSize); err != nil || len(dst) == 0 {
		return err
	}
	mat(dst, len(dst), w, stride, len(dst), y, nb*Q8_KBlockSize, 1, nb)
	return nil
}

func checkRows(rows, lw, stride, ly, nb, wbs, ybs int) error {
	if rows == 0 {
		return nil
	}
	return checkQRowsY(rows, lw, stride, ly, nb, wbs, ybs)
}

func f16(b []byte) float32 { return halfToFloat(binary.LittleEndian.Uint16(b)) }

func dot8(a []int8, q []byte) int32 {
	var s int32
	for i, v := range a {
		s += int32(v) * int32(int8(q[i]))
	}
	return s
}

func dotQ4_1(w, y []byte, nb int) float32 {
	var sum float32
	for i := 0; i < nb; i++ {
		bw, by := w[i*Q4_1BlockSize:(i+1)*Q4_1BlockSize], y[i*Q8_1BlockSize:(i+1)*Q8_1BlockSize]
		var s int32
		for j := 0; j < QK/2; j++ {
			s += int32(bw[4+j]&0xf)*int32(int8(by[4+j])) + int32(bw[4+j]>>4)*int32(int8(by[4+j+QK/2]))
		}
		sum += float32(float32(f16(bw)*f16(by))*float32(s)) + float32(f16(bw[2:])*f16(by[2:]))
	}
	return sum
}

func q5Sum(qs, qy []byte, qh uint32, off int32) int32 {
	var s int32
	for j := 0; j < QK/2; j++ {
		x0 := int32(qs[j]&0xf) | int32((qh>>j)<<4)&0x10
		x1 := int32(qs[j]>>4) | int32(qh>>(j+12))&0x10
		s += (x0-off)*int32(int8(qy[j])) + (x1-off)*int32(int8(qy[j+QK/2]))
	}
	return s
}

func dotQ5_0(w, y []byte, nb int) float32 {
	var sum float32
	for i := 0; i < nb; i++ {
		bw, by := w[i*Q5_0BlockSize:(i+1)*Q5_0BlockSize], y[i*Q8_0BlockSize:(i+1)*Q8_0BlockSize]
		s := q5Sum(bw[6:], by[2:], binary.LittleEndian.Uint32(bw[2:]), 16)
		sum += float32(f16(bw)*f16(by)) * float32(s)
	}
	return sum
}

func dotQ5_1(w, y []byte, nb int) float32 {
	var sum float32
	for i := 0; i < nb; i++ {
		bw, by := w[i*Q5_1BlockSize:(i+1)*Q5_1BlockSize], y[i*Q8_1BlockSize:(i+1)*Q8_1BlockSize]
		s := q5Sum(bw[8:], by[4:], binary.LittleEndian.Uint32(bw[4:]), 0)
		sum += float32(float32(f16(bw)*f16(by))*float32(s)) + float32(f16(bw[2:])*f16(by[2:]))
	}
	return sum
}

// q8K splits a q8_K block into its scale, quants and 16-quant sums.
func q8K(by []byte) (float32, []byte, []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(by)), by[4 : 4+QKK], by[4+QKK : Q8_KBlockSize]
}

func bsum(bs []byte, g int) int32 { return int32(int16(binary.LittleEndian.Uint16(bs[2*g:]))) }

func dotQ2_K(w, y []byte, nb int) float32 {
	var sum float32
	var a [QKK]int8
	for i := 0; i < nb; i++ {
		bw := w[i*Q2_KBlockSize : (i+1)*Q2_KBlockSize]
		dy, q8, bs := q8K(y[i*Q8_KBlockSize:])
		sc := bw[:16]
		for n := 0; n < QKK; n += 128 {
			q := bw[16+n/4 : 16+n/4+32]
			for j := 0; j < 4; j++ {
				for l := 0; l < 32; l++ {
					a[n+32*j+l] = int8((q[l] >> (2 * j)) & 3)
				}
			}
		}
		var isum, summs int32
		for g := 0; g < 16; g++ {
			isum += int32(sc[g]&0xf) * dot8(a[16*g:16*g+16], q8[16*g:])
			summs += bsum(bs, g) * int32(sc[g]>>4)
		}
		dall, dmin := dy*f16(bw[80:]), dy*f16(bw[82:])
		sum += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sum
}

func dotQ3_K(w, y []byte, nb int) float32 {
	var sum float32
	var a [QKK]int8
	for i := 0; i < nb; i++ {
		bw := w[i*Q3_KBlockSize : (i+1)*Q3_KBlockSize]
		dy, q8, _ := q8K(y[i*Q8_KBlockSize:])
		hm, sc := bw[:32], bw[96:108]
		m := uint8(1)
		for n := 0; n < QKK; n += 128 {
			q := bw[32+n/4 : 32+n/4+32]
			for j := 0; j < 4; j++ {
				for l := 0; l < 32; l++ {
					v := int8((q[l] >> (2 * j)) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					a[n+32*j+l] = v
				}
				m <<= 1
			}
		}
		var isum int32
		for g := 0; g < 16; g++ {
			isum += int32(cpukernels.Q3KScale(sc, g)) * dot8(a[16*g:16*g+16], q8[16*g:])
		}
		sum += float32(float32(f16(bw[108:])*dy) * float32(isum))
	}
	return sum
}

// k45Sum applies the q4_K/q5_K scales and mins to the decoded quants a.
func k45Sum(bw []byte, a *[QKK]int8, dy float32, q8, bs []byte) float32 {
	var isum, summs int32
	for g := 0; g < 8; g++ {
		s, m := cpukernels.K4ScaleMin(g, bw[4:16])
		isum += int32(s) * dot8(a[32*g:32*g+32], q8[32*g:])
		summs += (bsum(bs, 2*g) + bsum(bs, 2*g+1)) * int32(m)
	}
	return k4Combine(bw, dy, isum, summs)
}

// k4Combine scales the integer sums of a q4_K or q5_K super-block bw:
// d·d_y·isum − dmin·d_y·summs.
func k4Combine(bw []byte, dy float32, isum, summs int32) float32 {
	return float32(float32(f16(bw)*dy)*float32(isum)) - float32(float32(f16(bw[2:])*dy)*float32(summs))
}

func dotQ4_K(w, y []byte, nb int) float32 {
	var sum float32
	var a [QKK]int8
	for i := 0; i < nb; i++ {
		bw := w[i*Q4_KBlockSize : (i+1)*Q4_KBlockSize]
		dy, q8, bs := q8K(y[i*Q8_KBlockSize:])
		for j := 0; j < QKK; j += 64 {
			q := bw[16+j/2 : 16+j/2+32]
			for l, v := range q {
				a[j+l] = int8(v & 0xf)
				a[j+32+l] = int8(v >> 4)
			}
		}
		sum += k45Sum(bw, &a, dy, q8, bs)
	}
	return sum
}

func dotQ5_K(w, y []byte, nb int) float32 {
	var sum float32
	var a [QKK]int8
	for i := 0; i < nb; i++ {
		bw := w[i*Q5_KBlockSize : (i+1)*Q5_KBlockSize]
		dy, q8, bs := q8K(y[i*Q8_KBlockSize:])
		qh := bw[16:48]
		u1, u2 := uint8(1), uint8(2)
		for j := 0; j < QKK; j += 64 {
			q := bw[48+j/2 : 48+j/2+32]
			for l, v := range q {
				lo, hi := int8(v&0xf), int8(v>>4)
				if qh[l]&u1 != 0 {
					lo += 16
				}
				if qh[l]&u2 != 0 {
					hi += 16
				}
				a[j+l], a[j+32+l] = lo, hi
			}
			u1 <<= 2
			u2 <<= 2
		}
		sum += k45Sum(bw, &a, dy, q8, bs)
	}
	return sum
}

func dotQ6_K(w, y []byte, nb int) float32 {
	var sum float32
	var a [QKK]int8
	for i := 0; i < nb; i++ {
		bw := w[i*Q6_KBlockSize : (i+1)*Q6_KBlockSize]
		dy, q8, _ := q8K(y[i*Q8_KBlockSize:])
		for n := 0; n < QKK; n += 128 {
			ql, qh := bw[n/2:n/2+64], bw[128+n/4:128+n/4+32]
			for l := 0; l < 32; l++ {
				a[n+l] = int8(ql[l]&0xf|(qh[l]&3)<<4) - 32
				a[n+l+32] = int8(ql[l+32]&0xf|((qh[l]>>2)&3)<<4) - 32
				a[n+l+64] = int8(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
				a[n+l+96] = int8(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
			}
		}
		var isum int32
		for g := 0; g < 16; g++ {
			isum += int32(int8(bw[192+g])) * dot8(a[16*g:16*g+16], q8[16*g:])
		}
		sum += float32(float32(f16(bw[208:])*dy) * float32(isum))
	}
	return sum
}
