//go:build amd64 && !purego

package vec

import "unsafe"

// The group kernels (f16attn_amd64.s, see asmgen/f16attn.go) take strides
// in bytes. dotF16G<g>: 4·rows4 K rows, n a multiple of 16.
// madF16G<g>W<w>: w columns, rows > 0.

//go:noescape
func dotF16G4AVX512(k *byte, kstride int, q *float32, qstride int, n int, rows4 int, dst *float32, dstride int)

//go:noescape
func dotF16G2AVX512(k *byte, kstride int, q *float32, qstride int, n int, rows4 int, dst *float32, dstride int)

//go:noescape
func dotF16G1AVX512(k *byte, kstride int, q *float32, qstride int, n int, rows4 int, dst *float32, dstride int)

//go:noescape
func madF16G4W64AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

//go:noescape
func madF16G4W16AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

//go:noescape
func madF16G2W64AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

//go:noescape
func madF16G2W16AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

//go:noescape
func madF16G1W64AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

//go:noescape
func madF16G1W16AVX512(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

type dotGroupKernel = func(k *byte, kstride int, q *float32, qstride int, n int, rows4 int, dst *float32, dstride int)

type madGroupKernel = func(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)

// groupSizes are the head counts of the kernels, largest first: a group
// of heads is covered by as many of the largest as fit, then the smaller.
var groupSizes = [...]int{4, 2, 1}

var (
	dotGroupKernels = [...]dotGroupKernel{dotF16G4AVX512, dotF16G2AVX512, dotF16G1AVX512}
	mad64Kernels    = [...]madGroupKernel{madF16G4W64AVX512, madF16G2W64AVX512, madF16G1W64AVX512}
	mad16Kernels    = [...]madGroupKernel{madF16G4W16AVX512, madF16G2W16AVX512, madF16G1W16AVX512}
)

func dotF16Group(dst []float32, dstride int, k []byte, kstride, rows int, q []float32, qstride, heads, n int) {
	n16, rows4 := n&^15, rows/4
	if !useAVX512 || !useF16C || n16 == 0 || rows4 == 0 {
		dotF16GroupGo(dst, dstride, k, kstride, rows, q, qstride, heads, n)
		return
	}
	for h := 0; h < heads; {
		for i, g := range groupSizes {
			for ; heads-h >= g; h += g {
				dotGroupKernels[i](pb(k), kstride, &q[h*qstride], 4*qstride, n16, rows4, &dst[h*dstride], 4*dstride)
			}
		}
	}
	r4 := 4 * rows4
	for h := range heads {
		qh := q[h*qstride:][:n]
		if r4 < rows {
			dotF16Rows(dst[h*dstride+r4:][:rows-r4], k[r4*kstride:], kstride, qh, n)
		}
		if n16 < n {
			for r := range r4 {
				dst[h*dstride+r] += dotF16Go(k[r*kstride+2*n16:r*kstride+2*n], qh[n16:])
			}
		}
	}
}

// madTile is the most V rows one pass over a slice of columns covers
// before the next slice: the tile (64 rows of 128 halves: 16 KiB) stays
// in the L1 cache for the other slices.
const madTile = 64

func madF16Group(o []float32, ostride int, v []byte, vstride, rows int, w []float32, wstride, heads, n int) {
	n16 := n &^ 15
	if !useAVX512 || !useF16C || n16 == 0 {
		madF16Rows(o, ostride, v, vstride, rows, w, wstride, heads, n)
		return
	}
	for t0 := 0; t0 < rows; t0 += madTile {
		t := min(madTile, rows-t0)
		vt := pb(v[t0*vstride:])
		for h := 0; h < heads; {
			for i, g := range groupSizes {
				for ; heads-h >= g; h += g {
					c := 0
					for ; c+64 <= n16; c += 64 {
						mad64Kernels[i](&o[h*ostride+c], 4*ostride, (*byte)(unsafe.Add(unsafe.Pointer(vt), 2*c)), vstride, t, &w[h*wstride+t0], 4*wstride)
					}
					for ; c < n16; c += 16 {
						mad16Kernels[i](&o[h*ostride+c], 4*ostride, (*byte)(unsafe.Add(unsafe.Pointer(vt), 2*c)), vstride, t, &w[h*wstride+t0], 4*wstride)
					}
				}
			}
		}
	}
	if n16 < n {
		madF16Go(o, ostride, v, vstride, rows, w, wstride, heads, n16, n)
	}
}

// madF16Rows is madF16Group below AVX-512: each V row widened by the
// F16C kernel when its halves are 2-byte aligned, then added to every
// head's output.
func madF16Rows(o []float32, ostride int, v []byte, vstride, rows int, w []float32, wstride, heads, n int) {
	if !useF16C || uintptr(unsafe.Pointer(unsafe.SliceData(v)))%2 != 0 || vstride%2 != 0 {
		madF16Go(o, ostride, v, vstride, rows, w, wstride, heads, 0, n)
		return
	}
	buf := make([]float32, n)
	for r := range rows {
		src := unsafe.Slice((*uint16)(unsafe.Pointer(&v[r*vstride])), n)
		for i := f16ToF32(buf, src); i < n; i++ {
			buf[i] = halfToFloat(src[i])
		}
		for h := range heads {
			scaleAdd(o[h*ostride:][:n], buf, w[h*wstride+r])
		}
	}
}
