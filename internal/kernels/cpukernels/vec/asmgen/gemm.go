package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// level is one SIMD level's vector registers: 16 YMM of 8 float32 lanes
// (AVX2) or 32 ZMM of 16 (AVX-512).
type level struct {
	v     []reg.VecPhysical
	bytes int // bytes in one vector register
}

var (
	avx2 = level{
		v: []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
			reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15},
		bytes: 32,
	}
	avx512 = level{
		v: []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
			reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
			reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
			reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31},
		bytes: 64,
	}
	// xmm names the low 128 bits of Y0..Y15.
	xmm = [16]reg.VecPhysical{reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7,
		reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15}
)

// at is base+disp; idx is base+disp+index*scale.
func at(base reg.Register, disp int) operand.Mem { return operand.Mem{Base: base, Disp: disp} }

func idx(base reg.Register, disp int, index reg.Register, scale uint8) operand.Mem {
	return operand.Mem{Base: base, Disp: disp, Index: index, Scale: scale}
}

// fn starts the NOSPLIT function name of Go signature sig; doc opens
// its body as a comment.
func fn(c *build.Context, name, sig string, doc ...string) {
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr(sig)
	c.Comment(doc...)
}

// stride loads the element stride argument name into r, in bytes.
func stride(c *build.Context, name string, r reg.Register) {
	c.Load(c.Param(name), r)
	c.SHLQ(operand.Imm(2), r)
}

// param is the frame address of the active function's argument name.
func param(c *build.Context, name string) operand.Mem {
	b, err := c.Param(name).Resolve()
	if err != nil {
		panic(err) // a misspelt name in this generator, not input
	}
	return b.Addr
}

// genGemm writes gemm_amd64.s: the f32 GEMM micro-kernels (6×16 at AVX2,
// 6×32 at AVX-512, one source), the FMA peak loops of both levels, the
// AVX2 panel packing and the dot-product tiles of the small-m path.
func genGemm(c *build.Context) {
	microKernel(c, microKernelSpec{
		name: "kernel6x16",
		sig:  "func(k int, a *float32, lda int, b *float32, c *float32, ldc int, acc bool)",
		doc: []string{
			"c[r*ldc+j] (+)= sum_p a[r*lda+p] * b[p*16+j] for r < 6, j < 16, p < k:",
			"six rows of a (K-contiguous, stride lda) times one packed 16-wide panel",
			"of b. With acc the tile is added to c, else it overwrites it.",
		},
		lv:     avx2,
		panels: []panel{{"b", reg.RBX}},
		// Both 8-wide halves of a row come from the one panel.
		cols:       [2]operand.Mem{at(reg.RBX, 0), at(reg.RBX, 32)},
		prefetchHi: 63,
	})
	microKernel(c, microKernelSpec{
		name: "kernel6x32AVX512",
		sig:  "func(k int, a *float32, lda int, b0, b1 *float32, c *float32, ldc int, acc bool)",
		doc: []string{
			"c[r*ldc+j] (+)= sum_p a[r*lda+p] * b[p][j] for r < 6, j < 32, p < k,",
			"where columns 0-15 come from the packed 16-wide panel b0 and 16-31 from",
			"the panel b1. With acc the tile is added to c, else it overwrites it.",
			"Each accumulator lane gets the same FMA sequence as kernel6x16's, so",
			"the two kernels agree bit for bit.",
		},
		lv:         avx512,
		panels:     []panel{{"b0", reg.RBX}, {"b1", reg.RDX}},
		cols:       [2]operand.Mem{at(reg.RBX, 0), at(reg.RDX, 0)},
		prefetchHi: 64,
	})
	packB8(c)
	fmaLoop(c, "fmaLoop", avx2)
	fmaLoop(c, "fmaLoop512", avx512)
	mask := maskTable(c)
	dot2x4(c, mask)
	dot1x8(c, mask)
}

// panel is a packed panel of b: its argument and the register walking it.
type panel struct {
	param string
	reg   reg.GPPhysical
}

// microKernelSpec is one level's 6-row micro-kernel: accumulators
// v[2r], v[2r+1] hold row r of the tile, v[12], v[13] the b values of one
// k step (loaded from cols, 64 bytes further per k step), v[14], v[15]
// the broadcast a values of alternate rows.
type microKernelSpec struct {
	name, sig  string
	doc        []string
	lv         level
	panels     []panel
	cols       [2]operand.Mem
	prefetchHi int // second prefetch of each c row, bytes past its start
}

func microKernel(c *build.Context, s microKernelSpec) {
	v := s.lv.v
	fn(c, s.name, s.sig, s.doc...)
	c.Load(c.Param("k"), reg.RCX)
	c.Load(c.Param("a"), reg.RAX)
	stride(c, "lda", reg.R8)
	c.LEAQ(idx(reg.RAX, 0, reg.R8, 2), reg.R9)
	c.ADDQ(reg.R8, reg.R9)
	for _, p := range s.panels {
		c.Load(c.Param(p.param), p.reg)
	}
	c.Comment("Fetch the c tile now: it is read (acc) and written after the k loop,",
		"and would otherwise miss in cache once per row.")
	c.Load(c.Param("c"), reg.RDI)
	stride(c, "ldc", reg.R10)
	c.LEAQ(idx(reg.RDI, 0, reg.R10, 2), reg.R11)
	c.ADDQ(reg.R10, reg.R11)
	// Rows 0-2 of a from AX, rows 3-5 from R9 (R8 = lda in bytes); rows
	// of c likewise from DI and R11 (R10 = ldc in bytes).
	aRow := [6]operand.Mem{at(reg.RAX, 0), idx(reg.RAX, 0, reg.R8, 1), idx(reg.RAX, 0, reg.R8, 2),
		at(reg.R9, 0), idx(reg.R9, 0, reg.R8, 1), idx(reg.R9, 0, reg.R8, 2)}
	cRow := [6]operand.Mem{at(reg.RDI, 0), idx(reg.RDI, 0, reg.R10, 1), idx(reg.RDI, 0, reg.R10, 2),
		at(reg.R11, 0), idx(reg.R11, 0, reg.R10, 1), idx(reg.R11, 0, reg.R10, 2)}
	for _, m := range cRow {
		c.PREFETCHT0(m)
		c.PREFETCHT0(m.Offset(s.prefetchHi))
	}
	for i := range 12 {
		c.VXORPS(v[i], v[i], v[i])
	}
	// step is k step kk of an unrolled group.
	step := func(kk int) {
		c.VMOVUPS(s.cols[0].Offset(64*kk), v[12])
		c.VMOVUPS(s.cols[1].Offset(64*kk), v[13])
		for r, m := range aRow {
			bc := v[14+r%2]
			c.VBROADCASTSS(m.Offset(4*kk), bc)
			c.VFMADD231PS(v[12], bc, v[2*r])
			c.VFMADD231PS(v[13], bc, v[2*r+1])
		}
	}
	advance := func(steps int) {
		for _, p := range s.panels {
			c.ADDQ(operand.I32(64*steps), p.reg)
		}
		c.ADDQ(operand.I32(4*steps), reg.RAX)
		c.ADDQ(operand.I32(4*steps), reg.R9)
	}
	c.Label("kloop4")
	c.CMPQ(reg.RCX, operand.Imm(4))
	c.JL(operand.LabelRef("kloop1"))
	for kk := range 4 {
		step(kk)
	}
	advance(4)
	c.SUBQ(operand.I32(4), reg.RCX)
	c.JMP(operand.LabelRef("kloop4"))
	c.Label("kloop1")
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(operand.LabelRef("kstore"))
	step(0)
	advance(1)
	c.DECQ(reg.RCX)
	c.JMP(operand.LabelRef("kloop1"))
	c.Label("kstore")
	c.MOVBLZX(param(c, "acc"), reg.ESI)
	c.TESTQ(reg.RSI, reg.RSI)
	c.JNZ(operand.LabelRef("kadd"))
	for _, add := range []bool{false, true} {
		if add {
			c.Label("kadd")
		}
		for r, m := range cRow {
			hi := m.Offset(s.lv.bytes)
			if add {
				c.VADDPS(m, v[2*r], v[2*r])
				c.VADDPS(hi, v[2*r+1], v[2*r+1])
			}
			c.VMOVUPS(v[2*r], m)
			c.VMOVUPS(v[2*r+1], hi)
		}
		c.VZEROUPPER()
		c.RET()
	}
}

// fmaLoop is the FMA peak loop of one level: n iterations of 12
// independent multiply-adds on registers only.
func fmaLoop(c *build.Context, name string, lv level) {
	v := lv.v
	fn(c, name, "func(n int)",
		fmt.Sprintf("n iterations of 12 independent %d-wide FMAs on registers only: %d flops",
			lv.bytes/4, 12*2*lv.bytes/4),
		"per iteration, the CPU's float32 FMA peak at this level when nothing else limits it.")
	c.Load(c.Param("n"), reg.RCX)
	for i := range 14 {
		c.VXORPS(v[i], v[i], v[i])
	}
	c.Label("floop")
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(operand.LabelRef("fdone"))
	for i := range 12 {
		c.VFMADD231PS(v[12], v[13], v[i])
	}
	c.DECQ(reg.RCX)
	c.JMP(operand.LabelRef("floop"))
	c.Label("fdone")
	c.VZEROUPPER()
	c.RET()
}

// packB8 packs eight rows of b into one half of a 16-wide panel, eight k
// steps (an 8×8 transpose) at a time.
func packB8(c *build.Context) {
	y := avx2.v
	fn(c, "packB8", "func(k int, b *float32, ldb int, dst *float32)",
		"dst[p*16+r] = b[r*ldb+p] for r < 8, p < k (k a multiple of 8): eight",
		"rows of b into one half of a 16-wide packed panel.")
	c.Load(c.Param("k"), reg.RCX)
	c.Load(c.Param("b"), reg.RSI)
	stride(c, "ldb", reg.R8)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 2), reg.R9)
	c.LEAQ(idx(reg.RSI, 0, reg.R8, 4), reg.R11)
	c.Load(c.Param("dst"), reg.RDX)
	c.Label("ploop")
	c.CMPQ(reg.RCX, operand.Imm(8))
	c.JL(operand.LabelRef("pdone"))
	rows := []operand.Mem{at(reg.RSI, 0), idx(reg.RSI, 0, reg.R8, 1), idx(reg.RSI, 0, reg.R8, 2), idx(reg.RSI, 0, reg.R9, 1),
		at(reg.R11, 0), idx(reg.R11, 0, reg.R8, 1), idx(reg.R11, 0, reg.R8, 2), idx(reg.R11, 0, reg.R9, 1)}
	for i, m := range rows {
		c.VMOVUPS(m, y[i])
	}
	c.Comment("Transpose the 8×8 block in Y0..Y7 (rows) into Y8..Y15 (columns).")
	for i := 0; i < 8; i += 2 {
		c.VUNPCKLPS(y[i+1], y[i], y[8+i])
		c.VUNPCKHPS(y[i+1], y[i], y[9+i])
	}
	for i := 0; i < 8; i += 4 {
		c.VSHUFPS(operand.Imm(0x44), y[10+i], y[8+i], y[i])
		c.VSHUFPS(operand.Imm(0xEE), y[10+i], y[8+i], y[i+1])
		c.VSHUFPS(operand.Imm(0x44), y[11+i], y[9+i], y[i+2])
		c.VSHUFPS(operand.Imm(0xEE), y[11+i], y[9+i], y[i+3])
	}
	for _, half := range []uint64{0x20, 0x31} {
		for i := range 4 {
			dst := y[8+i]
			if half == 0x31 {
				dst = y[12+i]
			}
			c.VPERM2F128(operand.Imm(half), y[4+i], y[i], dst)
		}
	}
	for i := range 8 {
		c.VMOVUPS(y[8+i], at(reg.RDX, 64*i))
	}
	c.ADDQ(operand.I32(32), reg.RSI)
	c.ADDQ(operand.I32(32), reg.R11)
	c.ADDQ(operand.I32(512), reg.RDX)
	c.SUBQ(operand.I32(8), reg.RCX)
	c.JMP(operand.LabelRef("ploop"))
	c.Label("pdone")
	c.VZEROUPPER()
	c.RET()
}

// maskTable writes the lane masks of a partial 8-wide load: 8 all-ones
// words, then 8 zeros; 8 words loaded at masktab+32-4r mask the first r
// lanes. It returns the address of the first zero word.
func maskTable(c *build.Context) operand.Mem {
	m := c.StaticGlobal("masktab")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 8 {
		w := uint64(0)
		if i < 4 {
			w = ^uint64(0)
		}
		c.AddDatum(8*i, operand.U64(w))
	}
	return m.Offset(32)
}

// loader loads 8 floats at src into dst, plain or under the lane mask in
// Y14 (the k tail of the dot tiles).
type loader func(c *build.Context, src operand.Mem, dst reg.VecPhysical)

func loadU(c *build.Context, src operand.Mem, dst reg.VecPhysical) { c.VMOVUPS(src, dst) }

func loadM(c *build.Context, src operand.Mem, dst reg.VecPhysical) {
	c.VMASKMOVPS(src, reg.Y14, dst)
}

// dotTail loads the mask of the last CX (< 8) lanes into Y14, from the
// end of the mask table.
func dotTail(c *build.Context, mask operand.Mem) {
	c.LEAQ(mask, reg.RDX)
	c.SHLQ(operand.Imm(2), reg.RCX)
	c.SUBQ(reg.RCX, reg.RDX)
	c.VMOVUPS(at(reg.RDX, 0), reg.Y14)
}

// reduce4 sums each of the four 8-lane accumulators a[0..3] into lane q
// of X(a[0]) and stores (or, with DX ≠ 0, adds) the four sums at dst;
// t is scratch. label names the skip of the add.
func reduce4(c *build.Context, a [4]int, t int, dst operand.Mem, label string) {
	y := avx2.v
	c.VHADDPS(y[a[1]], y[a[0]], y[a[0]])
	c.VHADDPS(y[a[3]], y[a[2]], y[a[2]])
	c.VHADDPS(y[a[2]], y[a[0]], y[a[0]])
	c.VEXTRACTF128(operand.Imm(1), y[a[0]], xmm[t])
	c.VADDPS(xmm[t], xmm[a[0]], xmm[a[0]])
	c.TESTQ(reg.RDX, reg.RDX)
	c.JZ(operand.LabelRef(label))
	c.VADDPS(dst, xmm[a[0]], xmm[a[0]])
	c.Label(label)
	c.VMOVUPS(xmm[a[0]], dst)
}

// dotKLoop is the k loop of a dot tile: 8 k steps at a time while CX ≥ 8
// (the a rows loaded from aRows into Y8, Y9, ..., then step, then every
// pointer in ptrs 32 bytes on), then the last CX < 8 under a lane mask.
// Labels start with p; the code after it is at label p+"done".
func dotKLoop(c *build.Context, p string, mask operand.Mem, aRows []operand.Mem, ptrs []reg.Register, step func(loader)) {
	loadRows := func(ld loader) {
		for i, m := range aRows {
			ld(c, m, avx2.v[8+i])
		}
	}
	c.Label(p + "loop")
	c.CMPQ(reg.RCX, operand.Imm(8))
	c.JL(operand.LabelRef(p + "tail"))
	loadRows(loadU)
	step(loadU)
	for _, r := range ptrs {
		c.ADDQ(operand.I32(32), r)
	}
	c.SUBQ(operand.I32(8), reg.RCX)
	c.JMP(operand.LabelRef(p + "loop"))
	c.Label(p + "tail")
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(operand.LabelRef(p + "done"))
	dotTail(c, mask)
	loadRows(loadM)
	step(loadM)
}

func zero8(c *build.Context) {
	for i := range 8 {
		c.VXORPS(avx2.v[i], avx2.v[i], avx2.v[i])
	}
}

func dot2x4(c *build.Context, mask operand.Mem) {
	y := avx2.v
	fn(c, "dot2x4", "func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)",
		"c[r*ldc+q] (+)= sum_p a[r*lda+p] * b[q*ldb+p] for r < 2, q < 4, p < k: a",
		"2×4 tile of dot products along k, for products with few rows in a (no",
		"packing). With lda = 0 both rows are the same row. The last k%8",
		"elements are read with masked loads, so nothing past the rows is",
		"touched. With acc the sums are added to c.")
	c.Load(c.Param("k"), reg.RCX)
	c.Load(c.Param("a"), reg.RAX)
	stride(c, "lda", reg.R8)
	c.Load(c.Param("b"), reg.RBX)
	stride(c, "ldb", reg.R9)
	c.LEAQ(idx(reg.R9, 0, reg.R9, 2), reg.R10)
	zero8(c)
	// One 8-wide k step from the a rows in Y8, Y9: row q of b into
	// Y10+q, accumulated into Y0+q (a row 0) and Y4+q (a row 1).
	bRow := [4]operand.Mem{at(reg.RBX, 0), idx(reg.RBX, 0, reg.R9, 1), idx(reg.RBX, 0, reg.R9, 2), idx(reg.RBX, 0, reg.R10, 1)}
	step := func(ld loader) {
		for q, m := range bRow {
			ld(c, m, y[10+q])
			c.VFMADD231PS(y[10+q], y[8], y[q])
			c.VFMADD231PS(y[10+q], y[9], y[4+q])
		}
	}
	dotKLoop(c, "dk", mask, []operand.Mem{at(reg.RAX, 0), idx(reg.RAX, 0, reg.R8, 1)}, []reg.Register{reg.RAX, reg.RBX}, step)
	c.Label("dkdone")
	c.Load(c.Param("c"), reg.RDI)
	stride(c, "ldc", reg.R11)
	c.MOVBLZX(param(c, "acc"), reg.EDX)
	reduce4(c, [4]int{0, 1, 2, 3}, 1, at(reg.RDI, 0), "dstore0")
	reduce4(c, [4]int{4, 5, 6, 7}, 5, idx(reg.RDI, 0, reg.R11, 1), "dstore1")
	c.VZEROUPPER()
	c.RET()
}

func dot1x8(c *build.Context, mask operand.Mem) {
	y := avx2.v
	fn(c, "dot1x8", "func(k int, a *float32, b *float32, ldb int, c *float32, acc bool)",
		"c[q] (+)= sum_p a[p] * b[q*ldb+p] for q < 8, p < k: one row of a against",
		"eight rows of b (matrix-vector products); tails as in dot2x4.")
	c.Load(c.Param("k"), reg.RCX)
	c.Load(c.Param("a"), reg.RAX)
	c.Load(c.Param("b"), reg.RBX)
	stride(c, "ldb", reg.R9)
	c.LEAQ(idx(reg.R9, 0, reg.R9, 2), reg.R10)
	c.LEAQ(idx(reg.RBX, 0, reg.R9, 4), reg.R12)
	zero8(c)
	// One 8-wide k step from the a row in Y8: row q of b into Y9+q%4,
	// accumulated into Y0+q.
	bRow := [8]operand.Mem{at(reg.RBX, 0), idx(reg.RBX, 0, reg.R9, 1), idx(reg.RBX, 0, reg.R9, 2), idx(reg.RBX, 0, reg.R10, 1),
		at(reg.R12, 0), idx(reg.R12, 0, reg.R9, 1), idx(reg.R12, 0, reg.R9, 2), idx(reg.R12, 0, reg.R10, 1)}
	step := func(ld loader) {
		for q, m := range bRow {
			ld(c, m, y[9+q%4])
			c.VFMADD231PS(y[9+q%4], y[8], y[q])
		}
	}
	dotKLoop(c, "d8", mask, []operand.Mem{at(reg.RAX, 0)}, []reg.Register{reg.RAX, reg.RBX, reg.R12}, step)
	c.Label("d8done")
	c.Load(c.Param("c"), reg.RDI)
	c.MOVBLZX(param(c, "acc"), reg.EDX)
	reduce4(c, [4]int{0, 1, 2, 3}, 1, at(reg.RDI, 0), "d8store0")
	reduce4(c, [4]int{4, 5, 6, 7}, 5, at(reg.RDI, 16), "d8store1")
	c.VZEROUPPER()
	c.RET()
}
