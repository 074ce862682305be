package cpu

import (
	"fmt"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// qMaxM is the most activation rows for which a quantized MUL_MAT runs on
// the integer dots: above it, multiplying the activations' rounded values
// with dequantized weight rows in the register-blocked f32 GEMM is faster
// (BenchmarkMulMatQuant). Both paths round the activations the same way,
// so they differ only in the order of float sums.
const qMaxM = 96

// f16GemvMaxM is the most activation rows for which an f16 or bf16 MUL_MAT
// runs on the 16-bit row dots (vec.DotF16Rows, vec.DotBF16Rows, the
// weights widened as they are read)
// instead of widening the weights into the f32 GEMM: in decode-shaped
// products the weights are read about once, so widening them first costs
// more than the product (BenchmarkMulMatF16).
const f16GemvMaxM = 8

// f16GemvChunk is the weight rows an f16 GEMV worker takes at a time, read
// once from memory and then from cache for each further activation row.
const f16GemvChunk = 32

// maxRoundedStage is the most bytes of rounded activations (as float32) a
// MUL_MAT stages whole for mulMatRoundedKernels' two phases; above it the
// activations are rounded a block at a time inside the product
// (mulMatRoundedBlocked), so that a product with millions of activation
// rows (test-backend-ops' m=16, n=8400000, k=32) does not stage gigabytes
// next to its inputs and result. 64 MiB stages a 4096-token prompt of
// 4096-wide activations whole.
const maxRoundedStage = 64 << 20

// mulMatRoundedKernels returns the two phases of a MUL_MAT node t whose
// activations ggml rounds before the product, computed on the f32 GEMM:
// the round phase (split by rows) writes the activations, rounded to the
// weights' vec_dot type as ggml's CPU backend rounds them, into a dense
// scratch; the mm phase multiplies them with the widened or dequantized
// weights. It covers f16 and bf16 weights (products of two halves or two
// bfloat16 are exact in float32, so only the order of the sums differs from
// ggml's) and quantized weights with more activation rows than their
// integer dots take (qKernel.maxM). When the rounded activations would take
// more than maxStage bytes, round is nil and mm rounds them itself, a block
// at a time (mulMatRoundedBlocked). It returns nils when t is not of that
// kind.
func mulMatRoundedKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int, maxStage int64) (round, mm func(ith, nth int) error, nrows int64) {
	a, b := t.Src[0], t.Src[1]
	if !cpukernels.IsFloat(b.Type) || !f32Layout(t, dm) {
		return nil, nil, 0
	}
	if a.Type != runtime.TypeF16 && a.Type != runtime.TypeBF16 {
		// Checked before anything the closures below capture is declared:
		// those variables live on the heap, one allocation per MUL_MAT
		// (each f32 attention product of a decoder) even when it is not
		// of this kind.
		if qk, ok := quantKernel(a.Type); !ok || b.Ne[1] <= qk.maxM || a.Ne[0]%qk.act.BlockSize() != 0 {
			return nil, nil, 0
		}
	}
	var conv func(v float32) float32
	var qk qKernel
	switch a.Type {
	case runtime.TypeF16:
		// roundRow rounds whole rows (roundHalves).
	case runtime.TypeBF16:
		conv = func(v float32) float32 { return cpukernels.BF16ToF32(cpukernels.F32ToBF16(v)) }
	default:
		var ok bool
		if qk, ok = quantKernel(a.Type); !ok || b.Ne[1] <= qk.maxM || a.Ne[0]%qk.act.BlockSize() != 0 {
			return nil, nil, 0
		}
	}
	k := b.Ne[0]
	// rows is a local, not the result: a result the closures capture
	// moves to the heap when the function starts, one allocation per
	// MUL_MAT even when it is not of this kind.
	rows := b.Ne[1] * b.Ne[2] * b.Ne[3]
	qbufs := make([][]byte, nth) // one quantized row per worker
	// roundRow writes activation row r, rounded, into x.
	roundRow := func(ith int, r int64, x []float32) error {
		i1, i2, i3 := rowCoords(b.Ne, r)
		if err := cpukernels.LoadRow(b, bm, i1, i2, i3, x); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		if a.Type == runtime.TypeF16 {
			roundHalves(x)
			return nil
		}
		if conv != nil {
			for i, v := range x {
				x[i] = conv(v)
			}
			return nil
		}
		if qbufs[ith] == nil {
			qbufs[ith] = make([]byte, qk.act.RowSize(k))
		}
		if err := qk.quant(x, qbufs[ith]); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		if err := cpukernels.ToFloat(qk.act, qbufs[ith], x); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		return nil
	}
	gemv := (a.Type == runtime.TypeF16 || a.Type == runtime.TypeBF16) && b.Ne[1] <= f16GemvMaxM && a.IsContiguousRows()
	if !gemv && 4*rows*k > maxStage {
		if mm = mulMatRoundedBlocked(t, dm, am, roundRow, sp, nth); mm == nil {
			return nil, nil, 0
		}
		return nil, mm, rows
	}
	need := 4*rows*k + 4 // +4: room to align to 4 bytes
	if int64(cap(sp.q)) < need {
		sp.q = make([]byte, need)
	}
	buf := sp.q[:need]
	if o := uintptr(unsafe.Pointer(&buf[0])) % 4; o != 0 {
		buf = buf[4-o:]
	}
	buf = buf[:4*rows*k]
	round = func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; r++ {
			if err := roundRow(ith, r, floats(buf, uint64(r*k)*4, k)); err != nil {
				return err
			}
		}
		return nil
	}
	dense := [4]uint64{4, uint64(4 * k), uint64(4 * k * b.Ne[1]), uint64(4 * k * b.Ne[1] * b.Ne[2])}
	if gemv {
		return round, mulMatF16Gemv(t, dm, am, buf, dense), rows
	}
	mm = mulMatKernelB(t, dm, am, buf, dense, sp, nth)
	if mm == nil {
		return nil, nil, 0
	}
	return round, mm, rows
}

// roundHalves rounds x to half precision in place (ggml rounds the
// activations of an f16 MUL_MAT so), a block at a time through the CPU's
// conversion instructions (f32ToF16Row, f16ToF32Row): for a decode row
// the scalar conversion took 2% of the product.
func roundHalves(x []float32) {
	var h [512]uint16
	for i := 0; i < len(x); i += len(h) {
		xs := x[i:min(i+len(h), len(x))]
		hs := h[:len(xs)]
		f32ToF16Row(hs, xs)
		f16ToF32Row(xs, hs)
	}
}

// mulMatRoundedBlocked returns the single phase of a rounded MUL_MAT t
// (see mulMatRoundedKernels) whose activations are too many to stage
// whole: every worker takes its share of the activation rows and, a block
// of them at a time, rounds them with roundRow into its own scratch and
// multiplies them with the weights, widened or dequantized a chunk of rows
// at a time. The weights are widened once per block, which costs 1/block of
// the product. It returns nil when t's weights are not dense rows of a row
// type.
func mulMatRoundedBlocked(t *runtime.Tensor, dm, am []byte, roundRow func(ith int, r int64, x []float32) error, sp *scratchPool, nth int) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	if !a.IsContiguousRows() || !cpukernels.IsRowType(a.Type) {
		return nil
	}
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int64(t.Nb[1] / 4)
	rows := m * b.Ne[2] * b.Ne[3]
	block := max(16, (1<<18)/k)        // about 1 MiB of rounded rows per worker
	chunk := max(16, min(64, 16384/k)) // weight rows widened at a time, as mulMatKernelB
	rowBytes := a.Type.RowSize(k)
	sp.prepare(nth)
	return func(ith, nth int) error {
		scratch := sp.get(ith, int((block+chunk)*k))
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; {
			i1, i2, i3 := rowCoords(b.Ne, r)
			bn := min(block, r1-r, m-i1) // rows of one activation matrix
			X, S := scratch[:bn*k], scratch[block*k:]
			for j := int64(0); j < bn; j++ {
				if err := roundRow(ith, r+j, X[j*k:(j+1)*k]); err != nil {
					return err
				}
			}
			C := floats(dm, off3(t.Nb, i1, i2, i3), (bn-1)*ldc+n)
			aoff := off3(a.Nb, 0, i2/r2, i3/r3)
			for jc := int64(0); jc < n; jc += chunk {
				cn := min(chunk, n-jc)
				for j := int64(0); j < cn; j++ {
					ro := aoff + uint64(jc+j)*a.Nb[1]
					if err := toFloatRow(a.Type, am[ro:ro+rowBytes], S[j*k:(j+1)*k]); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
				}
				if err := vec.GemmNTBuf(&sp.gemm[ith], int(bn), int(cn), int(k), X, int(k), S, int(k), C[jc:], int(ldc)); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
			r += bn
		}
		return nil
	}
}

// mulMatF16Gemv returns the product phase of an f16 or bf16 MUL_MAT t
// with few activation rows (rounded to the weights' type in bm, laid out
// as bnb says): every worker takes its share of the weight rows,
// f16GemvChunk at a time (all at once for one activation row), and runs
// each activation row over them with vec.DotF16Rows (vec.DotBF16Rows).
func mulMatF16Gemv(t *runtime.Tensor, dm, am, bm []byte, bnb [4]uint64) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	dot := vec.DotF16Rows
	if a.Type == runtime.TypeBF16 {
		dot = vec.DotBF16Rows
	}
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	lda, ldc := int64(bnb[1]/4), int64(t.Nb[1]/4)
	stride := int(a.Nb[1])
	rowBytes := uint64(2 * k)
	return func(ith, nth int) error {
		j0, j1 := cpukernels.RowRange(n, ith, nth)
		for i3 := int64(0); i3 < b.Ne[3]; i3++ {
			for i2 := int64(0); i2 < b.Ne[2]; i2++ {
				A := floats(bm, off3(bnb, 0, i2, i3), (m-1)*lda+k)
				C := floats(dm, off3(t.Nb, 0, i2, i3), (m-1)*ldc+n)
				aoff := off3(a.Nb, 0, i2/r2, i3/r3)
				chunk := int64(f16GemvChunk)
				if m == 1 {
					// Nothing to reuse from the cache: one call over the
					// whole range, which the row dots stream (vec's
					// f16StreamRows).
					chunk = max(j1-j0, 1)
				}
				for jc := j0; jc < j1; jc += chunk {
					je := min(jc+chunk, j1)
					w := am[aoff+uint64(jc)*a.Nb[1] : aoff+uint64(je-1)*a.Nb[1]+rowBytes]
					for i := int64(0); i < m; i++ {
						if err := dot(C[i*ldc+jc:i*ldc+je], w, stride, A[i*lda:i*lda+k], int(k)); err != nil {
							return fmt.Errorf("tensor %s: %w", t, err)
						}
					}
				}
			}
		}
		return nil
	}
}
