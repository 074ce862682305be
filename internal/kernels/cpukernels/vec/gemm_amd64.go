//go:build amd64 && !purego

package vec

// gemm_amd64.s, f16dot_amd64.s and f16_amd64.s, every SIMD level of their
// kernels, are generated from one Go source per kernel by ./asmgen (make asm).
//go:generate go run ./asmgen

// Blocking of the assembly product (BLIS-style). A packed gemmKC×16 panel
// of b (16 KiB) stays in L1 while the micro-kernel walks gemmMC rows of a
// (gemmMC×gemmKC floats, 120 KiB, in L2); the packed gemmKC×gemmNC block
// of b (1 MiB) is reused across all rows of a from L2/L3.
const (
	gemmKC = 256
	gemmMC = 120 // a multiple of gemmMR
	gemmNC = 1024
	// Below gemmSmallM rows of a, packing b costs more than it saves: the
	// product runs as dot products.
	gemmSmallM = 16
	// Below gemmSwapM rows of a (and with at least twice as many rows of
	// b, and a row count that fills most of a 16-wide panel), the roles of
	// a and b are swapped so that the smaller is packed.
	gemmSwapM = 48
)

//go:noescape
func kernel6x16(k int, a *float32, lda int, b *float32, c *float32, ldc int, acc bool)

//go:noescape
func kernel6x32AVX512(k int, a *float32, lda int, b0, b1 *float32, c *float32, ldc int, acc bool)

//go:noescape
func dot2x4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)

//go:noescape
func dot1x8(k int, a *float32, b *float32, ldb int, c *float32, acc bool)

//go:noescape
func packB8(k int, b *float32, ldb int, dst *float32)

func gemmNT(buf *GemmBuf, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if !useAVX2 {
		gemmNTGo(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	if m == 1 && useAVX512 {
		gemv512(n, k, a, b, ldb, c)
		return
	}
	if m < gemmSmallM {
		gemmNTDot(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	if m < gemmSwapM && n >= 2*m && (m%gemmNR == 0 || m%gemmNR >= 12) {
		gemmNTSwapped(buf, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	gemmNTPacked(buf, m, n, k, a, lda, b, ldb, c, ldc)
}

// gemmNTSwapped computes C = A·Bᵀ as (B·Aᵀ)ᵀ for products with few rows of
// a and many of b: the packed operand is then a (cheap to pack) and b is
// streamed by the micro-kernel straight from memory. The transposed result
// goes to scratch and is transposed into c in 16-column blocks.
func gemmNTSwapped(buf *GemmBuf, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	var ct []float32
	if buf != nil {
		ct = buf.slot(&buf.ct, n*m)
	} else {
		ct = make([]float32, n*m)
	}
	gemmNTPacked(buf, n, m, k, b, ldb, a, lda, ct, m)
	for jb := 0; jb < n; jb += 16 {
		je := min(jb+16, n)
		for i := 0; i < m; i++ {
			row := c[i*ldc+jb : i*ldc+je]
			for j := range row {
				row[j] = ct[(jb+j)*m+i]
			}
		}
	}
}

// gemmNTPacked is the blocked product around kernel6x16, its packing
// memory from buf (nil: allocated).
func gemmNTPacked(buf *GemmBuf, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kcMax := min(gemmKC, k)
	ncMax := min(gemmNC, (n+gemmNR-1)/gemmNR*gemmNR)
	var bp, aEdge []float32
	m6 := m - m%gemmMR
	if buf != nil {
		bp = buf.slot(&buf.bp, kcMax*ncMax)
		if m6 < m {
			aEdge = buf.slot(&buf.edge, gemmMR*kcMax)
		}
	} else {
		bp = make([]float32, kcMax*ncMax)
		if m6 < m {
			aEdge = make([]float32, gemmMR*kcMax)
		}
	}
	for jc := 0; jc < n; jc += gemmNC {
		nb := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			packB(bp, b[jc*ldb+pc:], ldb, nb, kb)
			if aEdge != nil {
				for r := 0; r < gemmMR; r++ {
					row := aEdge[r*kb : (r+1)*kb]
					if m6+r < m {
						copy(row, a[(m6+r)*lda+pc:])
					} else {
						clear(row)
					}
				}
			}
			acc := pc > 0
			for ic := 0; ic < m; ic += gemmMC {
				mb := min(gemmMC, m-ic)
				for jr := 0; jr < nb; jr += gemmNR {
					nr := min(gemmNR, nb-jr)
					bpan := &bp[jr*kb]
					// AVX-512: two full panels at once (6×32 tiles), the
					// edge rows of a through kernel6x16 below.
					wide := useAVX512 && jr+2*gemmNR <= nb
					for ir := 0; ir < mb; ir += gemmMR {
						i := ic + ir
						aptr, ldA := (*float32)(nil), kb
						if i+gemmMR <= m {
							aptr, ldA = &a[i*lda+pc], lda
						} else {
							aptr = &aEdge[0]
						}
						if wide && i+gemmMR <= m {
							kernel6x32AVX512(kb, aptr, ldA, bpan, &bp[(jr+gemmNR)*kb], &c[i*ldc+jc+jr], ldc, acc)
							continue
						}
						if wide {
							// Edge rows: the second panel's tile first.
							gemmEdgeTile(kb, aptr, ldA, &bp[(jr+gemmNR)*kb], c, ldc, i, m, jc+jr+gemmNR, gemmNR, acc)
						}
						if nr == gemmNR && i+gemmMR <= m {
							kernel6x16(kb, aptr, ldA, bpan, &c[i*ldc+jc+jr], ldc, acc)
							continue
						}
						gemmEdgeTile(kb, aptr, ldA, bpan, c, ldc, i, m, jc+jr, nr, acc)
					}
					if wide {
						jr += gemmNR
					}
				}
			}
		}
	}
}

// gemmEdgeTile runs kernel6x16 on a partial tile (rows i.. of c, fewer
// than gemmMR of them left, or nr < gemmNR columns from column j) into
// scratch and stores (or adds) the part inside c.
func gemmEdgeTile(kb int, aptr *float32, ldA int, bpan *float32, c []float32, ldc, i, m, j, nr int, acc bool) {
	var cEdge [gemmMR * gemmNR]float32
	kernel6x16(kb, aptr, ldA, bpan, &cEdge[0], gemmNR, false)
	for r := 0; r < min(gemmMR, m-i); r++ {
		crow := c[(i+r)*ldc+j : (i+r)*ldc+j+nr]
		erow := cEdge[r*gemmNR : r*gemmNR+nr]
		if acc {
			for q, x := range erow {
				crow[q] += x
			}
		} else {
			copy(crow, erow)
		}
	}
}

// packB packs rows [0, nb) and columns [0, kb) of b (row stride ldb) into
// dst as 16-row panels: panel q holds dst[q*16*kb + p*16 + r] = b[(16q+r)*ldb
// + p], with zero rows past nb.
func packB(dst, b []float32, ldb, nb, kb int) {
	kb8 := kb &^ 7
	for jr := 0; jr < nb; jr += gemmNR {
		pan := dst[jr*kb : jr*kb+gemmNR*kb]
		nr := min(gemmNR, nb-jr)
		p0 := 0
		if nr == gemmNR && kb8 > 0 {
			packB8(kb8, &b[jr*ldb], ldb, &pan[0])
			packB8(kb8, &b[(jr+8)*ldb], ldb, &pan[8])
			p0 = kb8
		}
		for r := 0; r < gemmNR; r++ {
			if r >= nr {
				for p := p0; p < kb; p++ {
					pan[p*gemmNR+r] = 0
				}
				continue
			}
			row := b[(jr+r)*ldb : (jr+r)*ldb+kb]
			for p := p0; p < kb; p++ {
				pan[p*gemmNR+r] = row[p]
			}
		}
	}
}

// gemmDotKC: k is cut into chunks this long in the dot-product path, so
// that four rows of b and the rows of a stay in L1/L2 across the tiles.
const gemmDotKC = 4096

// gemmNTDot is the product for few rows of a: 2×4 tiles of dot products
// (1×8 for a single row) straight from the operands, in k chunks, each
// chunk of a few rows of b reused across all rows of a.
func gemmNTDot(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	var tmp [8]float32
	for pc := 0; pc < k; pc += gemmDotKC {
		kb := min(gemmDotKC, k-pc)
		acc := pc > 0
		j := 0
		if m == 1 {
			for ; j+8 <= n; j += 8 {
				dot1x8(kb, &a[pc], &b[j*ldb+pc], ldb, &c[j], acc)
			}
		}
		for ; j+4 <= n; j += 4 {
			i := 0
			for ; i+2 <= m; i += 2 {
				dot2x4(kb, &a[i*lda+pc], lda, &b[j*ldb+pc], ldb, &c[i*ldc+j], ldc, acc)
			}
			if i < m {
				dot2x4(kb, &a[i*lda+pc], 0, &b[j*ldb+pc], ldb, &tmp[0], 4, false)
				ci := c[i*ldc+j : i*ldc+j+4]
				for q := range ci {
					if acc {
						ci[q] += tmp[q]
					} else {
						ci[q] = tmp[q]
					}
				}
			}
		}
		for ; j < n; j++ {
			bj := b[j*ldb+pc : j*ldb+pc+kb]
			for i := 0; i < m; i++ {
				s := dot(a[i*lda+pc:i*lda+pc+kb], bj)
				if acc {
					c[i*ldc+j] += s
				} else {
					c[i*ldc+j] = s
				}
			}
		}
	}
}
