//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// useK512 selects the AVX-512 k-quant dots (qdot_k512_amd64.s): the level
// is avx512 and the CPU has AVX-512 VNNI (VPDPWSSD) and F16C. Set once at
// program start, never written afterwards.
var useK512 = useAVX512 && cpu.X86.HasAVX512VNNI && cpu.X86.HasF16C

// The kernels below compute, over nb ≥ 1 super-blocks, the dot of the
// weight row w with the q8_K row y (Dot1: returned) or with the four q8_K
// rows y, y+ys, y+2ys, y+3ys (Dot4: into dst[0], dst[ds], dst[2ds],
// dst[3ds]), in the float order of the Go kernels.

//go:noescape
func q2KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)

//go:noescape
func q2KDot1AVX512(w *byte, y *byte, nb int) float32

//go:noescape
func q3KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)

//go:noescape
func q3KDot1AVX512(w *byte, y *byte, nb int) float32

//go:noescape
func q4KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)

//go:noescape
func q4KDot1AVX512(w *byte, y *byte, nb int) float32

//go:noescape
func q5KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)

//go:noescape
func q5KDot1AVX512(w *byte, y *byte, nb int) float32

//go:noescape
func q6KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)

//go:noescape
func q6KDot1AVX512(w *byte, y *byte, nb int) float32

// The decode kernels: dst[r] = the dot of the weight row w+r·stride with
// the q8_K row y (nb ≥ 1 super-blocks), for r < 4, each the bits of the
// one-row kernel; they prefetch the next four rows' bytes as they go.

//go:noescape
func q4KDot4WAVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func q5KDot4WAVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func q6KDot4WAVX512(w *byte, stride int, y *byte, nb int, dst *float32)

// k512 names the k-quants with AVX-512 kernels.
type k512 int

const (
	q2K512 k512 = iota
	q3K512
	q4K512
	q5K512
	q6K512
)

func dotQ4_K512(w, y []byte, nb int) float32 { return q4KDot1AVX512(&w[0], &y[0], nb) }

func dotQ5_K512(w, y []byte, nb int) float32 { return q5KDot1AVX512(&w[0], &y[0], nb) }

func dotQ6_K512(w, y []byte, nb int) float32 { return q6KDot1AVX512(&w[0], &y[0], nb) }

// mat is matDot on the kernels of k (arguments checked by the caller):
// four activation rows at a time against each weight row; each remaining
// activation row (decode's one) against four weight rows a call where k
// has such a kernel (mat4W, with the next rows prefetched: same bits,
// faster streaming on a quiet machine; RATIONALE.md, "Decode's k-quant
// dots take four weight rows a call"), the rest one by one.
func (k k512) mat(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) {
	c := 0
	for ; c+4 <= ny; c += 4 {
		for r := 0; r < nw; r++ {
			switch k {
			case q2K512:
				q2KDot4AVX512(&w[r*stride], &y[c*ys], ys, nb, &dst[c*ldd+r], ldd)
			case q3K512:
				q3KDot4AVX512(&w[r*stride], &y[c*ys], ys, nb, &dst[c*ldd+r], ldd)
			case q4K512:
				q4KDot4AVX512(&w[r*stride], &y[c*ys], ys, nb, &dst[c*ldd+r], ldd)
			case q5K512:
				q5KDot4AVX512(&w[r*stride], &y[c*ys], ys, nb, &dst[c*ldd+r], ldd)
			default:
				q6KDot4AVX512(&w[r*stride], &y[c*ys], ys, nb, &dst[c*ldd+r], ldd)
			}
		}
	}
	for ; c < ny; c++ {
		for r := k.mat4W(dst[c*ldd:], w, stride, nw, y[c*ys:], nb); r < nw; r++ {
			switch k {
			case q2K512:
				dst[c*ldd+r] = q2KDot1AVX512(&w[r*stride], &y[c*ys], nb)
			case q3K512:
				dst[c*ldd+r] = q3KDot1AVX512(&w[r*stride], &y[c*ys], nb)
			case q4K512:
				dst[c*ldd+r] = q4KDot1AVX512(&w[r*stride], &y[c*ys], nb)
			case q5K512:
				dst[c*ldd+r] = q5KDot1AVX512(&w[r*stride], &y[c*ys], nb)
			default:
				dst[c*ldd+r] = q6KDot1AVX512(&w[r*stride], &y[c*ys], nb)
			}
		}
	}
}

// mat4W sets dst[r] for the first weight rows, four at a time, against the
// activation row y with the four-weight-row kernel of k (arguments checked
// by the caller: nw rows in w and dst), and returns how
// many it set (0 where k has no such kernel).
func (k k512) mat4W(dst []float32, w []byte, stride, nw int, y []byte, nb int) int {
	r := 0
	for ; r+4 <= nw; r += 4 {
		switch k {
		case q4K512:
			q4KDot4WAVX512(&w[r*stride], stride, &y[0], nb, &dst[r])
		case q5K512:
			q5KDot4WAVX512(&w[r*stride], stride, &y[0], nb, &dst[r])
		case q6K512:
			q6KDot4WAVX512(&w[r*stride], stride, &y[0], nb, &dst[r])
		default:
			return 0
		}
	}
	return r
}
