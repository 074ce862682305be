package cuda

import (
	"fmt"
	"math"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// Function codes of k_unary beyond ggml's unary ops (0..21).
const (
	uSqr       = 100
	uSqrt      = 101
	uLog       = 102
	uSin       = 103
	uCos       = 104
	uScale     = 105
	uClamp     = 106
	uLeakyRelu = 107
)

// Binary op codes of k_binary_f32.
var binaryCode = map[runtime.Op]int32{runtime.OpAdd: 0, runtime.OpSub: 1, runtime.OpMul: 2, runtime.OpDiv: 3}

const (
	f32 = runtime.TypeF32
	f16 = runtime.TypeF16
)

// unarySupported reports whether k_unary has unary function u: every
// function of ggml 0.27.0 but XIELU (four op parameters the kernel does
// not take).
func unarySupported(u runtime.UnaryOp) bool {
	return u >= 0 && u < runtime.UnaryCount && u != runtime.UnaryXielu
}

// Limits of the kernels' launch shapes, checked by SupportsOp.
const (
	// argsortMaxCols bounds ARGSORT and TOP_K rows: k_argsort_f32 ranks
	// by counting, n² comparisons per row.
	argsortMaxCols = 16384
	// faThreads is k_flash_attn_ext_f32's block size; each thread keeps
	// up to 4 output elements, so V rows hold at most 4·faThreads.
	faThreads = 128
	// faMaxDK bounds the K row length (q is staged in shared memory).
	faMaxDK = 4096
)

func allF32(ts ...*runtime.Tensor) bool {
	for _, t := range ts {
		if t == nil || t.Type != f32 {
			return false
		}
	}
	return true
}

// isMatRowType reports whether the kernels read elements of type t
// (load_elem): MUL_MAT's weights, GET_ROWS' and CPY's sources.
func isMatRowType(t runtime.Type) bool {
	_, ok := kMulMat[t]
	return ok
}

// quantStoreTypes are the block types CPY and SET_ROWS write
// (quant_block: the KV-cache types llama.cpp offers but iq4_nl).
var quantStoreTypes = map[runtime.Type]bool{
	runtime.TypeQ4_0: true, runtime.TypeQ4_1: true, runtime.TypeQ5_0: true, runtime.TypeQ5_1: true, runtime.TypeQ8_0: true,
}

// isFloatType reports the element types the kernels write (store_elem).
func isFloatType(t runtime.Type) bool { return t == f32 || t == f16 || t == runtime.TypeBF16 }

// SupportsOp reports whether Compute has a kernel for node t with its
// sources' types and layouts.
func (b *Backend) SupportsOp(t *runtime.Tensor) bool {
	if t == nil {
		return false
	}
	s0, s1 := t.Src[0], t.Src[1]
	switch t.Op {
	case runtime.OpNone, runtime.OpView, runtime.OpReshape, runtime.OpPermute, runtime.OpTranspose:
		return true
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if s0 != nil && quantStoreTypes[t.Type] {
			// Into blocks (k_cpy_quant): a contiguous result, float source
			// rows of whole blocks.
			return isFloatType(s0.Type) && s0.Nelements() == t.Nelements() && t.IsContiguous() && s0.Ne[0]%32 == 0
		}
		// A block-type source is read by element index within its rows
		// (load_elem), so its rows must be dense.
		return s0 != nil && isMatRowType(s0.Type) && isFloatType(t.Type) && s0.Nelements() == t.Nelements() &&
			(!s0.Type.IsQuantized() || s0.IsContiguousRows())
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv:
		return s0 != nil && s1 != nil && isFloatType(t.Type) && isFloatType(s0.Type) && isFloatType(s1.Type) &&
			s0.Ne == t.Ne && runtime.CanRepeat(s1, t)
	case runtime.OpAdd1:
		return allF32(t, s0, s1) && s0.Ne == t.Ne && s1.IsScalar()
	case runtime.OpClamp, runtime.OpScale, runtime.OpSqr, runtime.OpSqrt, runtime.OpLog, runtime.OpSin, runtime.OpCos,
		runtime.OpLeakyRelu, runtime.OpUnary:
		return s0 != nil && isFloatType(t.Type) && s0.Type == t.Type && s0.Ne == t.Ne &&
			(t.Op != runtime.OpUnary || unarySupported(t.UnaryOp()))
	case runtime.OpNorm, runtime.OpRmsNorm, runtime.OpDiagMaskInf:
		return allF32(t, s0) && s0.Ne == t.Ne
	case runtime.OpL2Norm:
		return allF32(t, s0) && s0.Ne == t.Ne && t.OpParamF32(0) >= 0
	case runtime.OpSsmConv:
		return cpukernels.Supports(t) == nil // ggml's shapes, all f32, rows of adjacent elements
	case runtime.OpSsmScan:
		// ggml's shapes (cpukernels' rules: the layouts the kernel reads),
		// a state row the kernel's private array holds.
		return cpukernels.Supports(t) == nil && t.Src[0].Ne[0] <= ssmScanMaxState
	case runtime.OpGlu:
		return b.supportsGlu(t)
	case runtime.OpSetRows:
		if s0 != nil && quantStoreTypes[t.Type] && (s0.Ne[0]%32 != 0 || !t.IsContiguousRows()) {
			return false // k_set_rows_quant: whole blocks into dense rows
		}
		return s0 != nil && s1 != nil && (s0.Type == f32 || s0.Type == f16) && (isFloatType(t.Type) || quantStoreTypes[t.Type]) &&
			(s1.Type == runtime.TypeI32 || s1.Type == runtime.TypeI64) &&
			t.Ne[0] == s0.Ne[0] && t.Ne[2] == s0.Ne[2] && t.Ne[3] == s0.Ne[3] && s0.Ne[1] == s1.Ne[0] &&
			s1.Ne[1] > 0 && s1.Ne[2] > 0 && s0.Ne[2]%s1.Ne[1] == 0 && s0.Ne[3]%s1.Ne[2] == 0 && s1.Ne[3] == 1
	case runtime.OpPad:
		if s0 == nil || !isFloatType(t.Type) || s0.Type != t.Type || t.OpParamI32(8) != 0 { // no circular mode
			return false
		}
		for d := 0; d < 4; d++ {
			lp, rp := int64(t.OpParamI32(2*d)), int64(t.OpParamI32(2*d+1))
			if lp < 0 || rp < 0 || t.Ne[d] != s0.Ne[d]+lp+rp {
				return false
			}
		}
		return true
	case runtime.OpIm2col:
		return b.supportsIm2col(t)
	case runtime.OpAddId:
		s2 := t.Src[2]
		return allF32(t, s0, s1) && s2 != nil && s2.Type == runtime.TypeI32 && s0.Ne == t.Ne &&
			s1.Ne[0] == t.Ne[0] && s2.Ne[0] >= t.Ne[1] && s2.Ne[1] >= t.Ne[2] && t.Ne[3] == 1
	case runtime.OpArgsort, runtime.OpTopK:
		if !allF32(s0) || t.Type != runtime.TypeI32 || t.Ne[1] != s0.Ne[1] || t.Ne[2] != s0.Ne[2] ||
			t.Ne[3] != s0.Ne[3] || s0.Ne[0] > argsortMaxCols {
			return false
		}
		if t.Op == runtime.OpTopK {
			return t.Ne[0] <= s0.Ne[0]
		}
		o := t.OpParamI32(0)
		return t.Ne[0] == s0.Ne[0] && (o == 0 || o == 1)
	case runtime.OpFlashAttnExt:
		return b.supportsFlashAttn(t)
	case runtime.OpSumRows, runtime.OpMean:
		return allF32(t, s0) && t.Ne == [4]int64{1, s0.Ne[1], s0.Ne[2], s0.Ne[3]}
	case runtime.OpSum:
		// Rows of adjacent elements only: ggml's CPU SUM, the reference,
		// reads every row as adjacent elements whatever nb[0] says.
		return allF32(t, s0) && t.Nelements() == 1 && s0.Nb[0] == 4
	case runtime.OpFill:
		return t.Type == f32 && t.IsContiguous()
	case runtime.OpRepeat:
		return s0 != nil && (t.Type == f32 || t.Type == f16) && s0.Type == t.Type && runtime.CanRepeat(s0, t)
	case runtime.OpConcat:
		// f32 by k_concat_f32; the other element types (i8, f16, bf16,
		// i32, i64) as bytes by k_concat; not blocks.
		dim, es := t.OpParamI32(0), t.Type.Size()
		return s0 != nil && s1 != nil && s0.Type == t.Type && s1.Type == t.Type && !t.Type.IsQuantized() &&
			(es == 1 || es == 2 || es == 4 || es == 8) && dim >= 0 && dim < 4
	case runtime.OpMulMat:
		return s0 != nil && s1 != nil && isMatRowType(s0.Type) && activationsOK(s0, s1) && t.Type == f32 &&
			s0.IsContiguousRows() && s0.Ne[0] == s1.Ne[0] && s1.Ne[2]%s0.Ne[2] == 0 && s1.Ne[3]%s0.Ne[3] == 0 &&
			t.Ne == [4]int64{s0.Ne[1], s1.Ne[1], s1.Ne[2], s1.Ne[3]} &&
			s1.Ne[2]*s1.Ne[3] <= 65535 && s1.Ne[1] <= 64*65535 &&
			s1.Ne[0]%cpukernels.VecDotType(s0.Type).BlockSize() == 0 // whole blocks of rounded activations
	case runtime.OpMulMatId:
		ids := t.Src[2]
		return s0 != nil && s1 != nil && ids != nil && isMatRowType(s0.Type) && activationsOK(s0, s1) &&
			ids.Type == runtime.TypeI32 && t.Type == f32 && s0.IsContiguousRows() && s0.Ne[3] == 1 && s1.Ne[3] == 1 &&
			ids.Ne[2] == 1 && ids.Ne[3] == 1 && ids.Ne[1] == s1.Ne[2] && s0.Ne[0] == s1.Ne[0] && s1.Ne[1] > 0 &&
			ids.Ne[0]%s1.Ne[1] == 0 && t.Ne == [4]int64{s0.Ne[1], ids.Ne[0], s1.Ne[2], 1} &&
			s1.Ne[0]%cpukernels.VecDotType(s0.Type).BlockSize() == 0
	case runtime.OpGetRows:
		return s0 != nil && s1 != nil && isMatRowType(s0.Type) && s1.Type == runtime.TypeI32 && t.Type == f32 &&
			s0.IsContiguousRows() && t.Ne == [4]int64{s0.Ne[0], s1.Ne[0], s1.Ne[1], s1.Ne[2]} &&
			s0.Ne[2] == s1.Ne[1] && s1.Ne[3] == 1
	case runtime.OpSoftMax:
		if !allF32(t, s0) || s0.Ne != t.Ne {
			return false
		}
		if sk := t.Src[2]; sk != nil && (sk.Type != f32 || sk.Ne[0] != t.Ne[2] || sk.Nb[0] != 4) {
			return false // sinks: one f32 per index of dimension 2, dense
		}
		if s1 != nil {
			return (s1.Type == f32 || s1.Type == f16) && s1.Ne[0] == t.Ne[0] && s1.Ne[1] >= t.Ne[1] &&
				t.Ne[2]%s1.Ne[2] == 0 && t.Ne[3]%s1.Ne[3] == 0
		}
		return t.OpParamF32(1) <= 0
	case runtime.OpSoftMaxBack, runtime.OpSiluBack, runtime.OpRmsNormBack:
		if !allF32(t, s0, s1) || s0.Ne != t.Ne || s1.Ne != t.Ne {
			return false
		}
		return t.Op != runtime.OpSoftMaxBack || t.OpParamF32(1) == 0
	case runtime.OpRope, runtime.OpRopeBack:
		// f32 or f16, every mode of ggml 0.27.0 (k_rope).
		if s0 == nil || s1 == nil || (t.Type != f32 && t.Type != f16) || s0.Type != t.Type || s0.Ne != t.Ne ||
			s1.Type != runtime.TypeI32 || s1.Nb[0] != 4 {
			return false
		}
		if ff := t.Src[2]; ff != nil && !ff.IsContiguous() {
			return false
		}
		return cpukernels.RopeShapeOK(t) == ""
	}
	return false
}

// Compute runs every node of g in order on the backend's stream and waits
// for the result. Every tensor must be in memory the backend supports.
func (b *Backend) Compute(g *runtime.Graph) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	for _, t := range g.Nodes() {
		if !b.SupportsOp(t) {
			return fmt.Errorf("cuda: node %s: %w", t, runtime.ErrUnsupported)
		}
	}
	return b.dev.do(func() error {
		for _, t := range g.Nodes() {
			if err := b.computeNode(t); err != nil {
				return fmt.Errorf("cuda: node %s: %w", t, err)
			}
		}
		return b.dev.drv.check("cuStreamSynchronize", b.dev.drv.cuStreamSynchronize(b.stream))
	})
}

// addr returns the device address of t's first byte after checking that
// t's memory is one the kernels can reach.
func (b *Backend) addr(t *runtime.Tensor) (uint64, error) {
	if t.Buffer == nil {
		return 0, fmt.Errorf("tensor %q: %w", t.Name, runtime.ErrNotAllocated)
	}
	switch buf := t.Buffer.(type) {
	case *deviceBuffer:
		if buf.bt.dev.ordinal != b.dev.ordinal {
			return 0, fmt.Errorf("tensor %q is on another device: %w", t.Name, runtime.ErrUnsupported)
		}
		if err := buf.live(); err != nil {
			return 0, err
		}
	case *hostBuffer:
		if !b.dev.uva {
			return 0, fmt.Errorf("tensor %q: pinned memory not addressable here: %w", t.Name, runtime.ErrUnsupported)
		}
		if err := buf.live(); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("tensor %q is in %s memory: %w", t.Name, t.Buffer.Type().Name(), runtime.ErrUnsupported)
	}
	if _, err := runtime.CheckBufferRange(t.Buffer, t, 0, t.NBytes()); err != nil {
		return 0, err
	}
	p := t.Buffer.Base() + t.Offset
	if err := checkAligned(t, p); err != nil {
		return 0, err
	}
	return p, nil
}

// checkAligned reports an error when the kernels would read or write t's
// elements at addresses that are not multiples of the element size (f32
// and i32: 4, f16: 2; quantized blocks are read byte by byte). A GPU
// faults on such an access with CUDA_ERROR_MISALIGNED_ADDRESS, a sticky
// error that leaves the whole context unusable, so it is refused here.
func checkAligned(t *runtime.Tensor, p uint64) error {
	if t.Type.IsQuantized() {
		return nil
	}
	a := t.Type.Size()
	if a <= 1 || a&(a-1) != 0 || a > 8 {
		return nil
	}
	bad := p%a != 0
	for i := 0; i < runtime.MaxDims; i++ {
		if t.Ne[i] > 1 && t.Nb[i]%a != 0 {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("tensor %q (%s) at offset %d with strides %v is not %d-byte aligned: %w",
			t.Name, t.Type, t.Offset, t.Nb, a, runtime.ErrUnsupported)
	}
	return nil
}

// Launch geometry.
const (
	blockThreads = 256
	maxGridYZ    = 65535
	maxGridX     = 1 << 30
)

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func clampGrid(n, max int64) uint32 {
	if n < 1 {
		return 1
	}
	if n > max {
		return uint32(max)
	}
	return uint32(n)
}

// ssmScanThreads is k_ssm_scan_f32's block size (a thread per state
// row); ssmScanMaxState its SSM_MAXN, the longest state row (d_state).
const (
	ssmScanThreads  = 64
	ssmScanMaxState = 256
)

// rowsGrid is the launch shape of the "rows" kernels for a tensor with
// ne0 columns and nrows rows.
func rowsGrid(ne0, nrows int64) (dim3, dim3) {
	return dim3{clampGrid(ceilDiv(ne0, blockThreads), maxGridYZ), clampGrid(nrows, maxGridYZ), 1}, dim3{blockThreads, 1, 1}
}

// reduceBlock is the block size of the row-reduction kernels: a power of
// two from 32 to 1024, near the row length.
func reduceBlock(ne0 int64) uint32 {
	n := uint32(32)
	for n < 1024 && int64(n) < ne0 {
		n *= 2
	}
	return n
}

// reduceLaunch launches reduction kernel k with one block per row.
func (b *Backend) reduceLaunch(k *kernel, ne0, nrows int64, a *args) error {
	bs := reduceBlock(ne0)
	return b.launch(k, dim3{clampGrid(nrows, maxGridX), 1, 1}, dim3{bs, 1, 1}, bs*4, a)
}

// computeNode launches the kernel of one node.
func (b *Backend) computeNode(t *runtime.Tensor) error {
	if t.Op == runtime.OpNone || t.Op.IsViewOp() || t.Nelements() == 0 {
		return nil
	}
	dst, err := b.addr(t)
	if err != nil {
		return err
	}
	var src [3]uint64
	for i := range src {
		if s := t.Src[i]; s != nil {
			if src[i], err = b.addr(s); err != nil {
				return err
			}
		}
	}
	s0, s1 := t.Src[0], t.Src[1]
	a := &args{}
	switch t.Op {
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if quantStoreTypes[t.Type] {
			a.ptr(dst).i32(int32(t.Type)).ptr(src[0]).shape(s0).i32(int32(s0.Type))
			n := s0.Nelements() / 32
			return b.launch(&kCpyQuant, dim3{clampGrid(ceilDiv(n, blockThreads), maxGridX), 1, 1}, dim3{blockThreads, 1, 1}, 0, a)
		}
		a.ptr(dst).shape(t).i32(int32(t.Type)).ptr(src[0]).shape(s0).i32(int32(s0.Type))
		g, bl := rowsGrid(s0.Ne[0], s0.Nrows())
		return b.launch(&kCpy, g, bl, 0, a)
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv, runtime.OpAdd1:
		code := binaryCode[t.Op]
		if t.Op == runtime.OpAdd1 {
			code = 0
		}
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		if !allF32(t, s0, s1) {
			a.ptr(dst).shape(t).i32(int32(t.Type)).ptr(src[0]).shape(s0).i32(int32(s0.Type)).
				ptr(src[1]).shape(s1).i32(int32(s1.Type)).i32(code)
			return b.launch(&kBinaryAny, g, bl, 0, a)
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(s1).i32(code)
		return b.launch(&kBinary, g, bl, 0, a)
	case runtime.OpScale, runtime.OpSqr, runtime.OpSqrt, runtime.OpLog, runtime.OpClamp, runtime.OpUnary,
		runtime.OpSin, runtime.OpCos, runtime.OpLeakyRelu:
		var code int32
		var p0, p1 float32
		switch t.Op {
		case runtime.OpScale:
			code, p0, p1 = uScale, t.OpParamF32(0), t.OpParamF32(1)
		case runtime.OpSin:
			code = uSin
		case runtime.OpCos:
			code = uCos
		case runtime.OpLeakyRelu:
			code, p0 = uLeakyRelu, t.OpParamF32(0)
		case runtime.OpSqr:
			code = uSqr
		case runtime.OpSqrt:
			code = uSqrt
		case runtime.OpLog:
			code = uLog
		case runtime.OpClamp:
			code, p0, p1 = uClamp, t.OpParamF32(0), t.OpParamF32(1)
		default:
			code = int32(t.UnaryOp())
		}
		a.ptr(dst).shape(t).i32(int32(t.Type)).ptr(src[0]).shape(s0).i32(int32(s0.Type)).i32(code).f32(p0).f32(p1)
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kUnary, g, bl, 0, a)
	case runtime.OpGlu:
		var pb uint64
		sb := s0
		if s1 != nil {
			pb, sb = src[1], s1
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(pb).shape(sb).i32(int32(t.Type)).
			i32(t.OpParamI32(0)).i32(t.OpParamI32(1)).f32(t.OpParamF32(2)).f32(t.OpParamF32(3))
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kGlu, g, bl, 0, a)
	case runtime.OpSetRows:
		wide := int32(0)
		if s1.Type == runtime.TypeI64 {
			wide = 1
		}
		a.ptr(dst).shape(t).i32(int32(t.Type)).ptr(src[0]).shape(s0).i32(int32(s0.Type)).
			ptr(src[1]).shape(s1).i32(wide).ptr(b.status)
		var err error
		if quantStoreTypes[t.Type] {
			n := s0.Nelements() / 32
			err = b.launch(&kSetRowsQ, dim3{clampGrid(ceilDiv(n, blockThreads), maxGridX), 1, 1}, dim3{blockThreads, 1, 1}, 0, a)
		} else {
			g, bl := rowsGrid(s0.Ne[0], s0.Nrows())
			err = b.launch(&kSetRows, g, bl, 0, a)
		}
		if err != nil {
			return err
		}
		return b.checkStatus(s1, t.Ne[1])
	case runtime.OpPad:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(int32(t.Type)).
			i32(t.OpParamI32(0)).i32(t.OpParamI32(2)).i32(t.OpParamI32(4)).i32(t.OpParamI32(6))
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kPad, g, bl, 0, a)
	case runtime.OpIm2col:
		is2D := t.OpParamI32(6) != 0
		kw, kh := s0.Ne[0], int64(1)
		if is2D {
			kh = s0.Ne[1]
		}
		a.ptr(dst).shape(t).i32(int32(t.Type)).ptr(src[1]).shape(s1).i32(int32(s1.Type)).
			i32(int32(kw)).i32(int32(kh)).i32(t.OpParamI32(6))
		for i := 0; i < 6; i++ {
			a.i32(t.OpParamI32(i))
		}
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kIm2col, g, bl, 0, a)
	case runtime.OpAddId:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(s1).ptr(src[2]).shape(t.Src[2]).ptr(b.status)
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		if err := b.launch(&kAddID, g, bl, 0, a); err != nil {
			return err
		}
		return b.checkStatus(t.Src[2], s1.Ne[1])
	case runtime.OpArgsort, runtime.OpTopK:
		desc, topk := int32(1), int32(1)
		if t.Op == runtime.OpArgsort {
			desc, topk = t.OpParamI32(0), 0
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(desc).i32(topk)
		return b.reduceLaunch(&kArgsort, s0.Ne[0], s0.Nrows(), a)
	case runtime.OpFlashAttnExt:
		return b.flashAttn(t, dst)
	case runtime.OpSumRows, runtime.OpMean:
		mean := int32(0)
		if t.Op == runtime.OpMean {
			mean = 1
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(mean)
		return b.reduceLaunch(&kSumRows, s0.Ne[0], s0.Nrows(), a)
	case runtime.OpSum:
		// One block walks every row (k_sum_f32).
		a.ptr(dst).ptr(src[0]).shape(s0)
		return b.reduceLaunch(&kSum, s0.Ne[0], 1, a)
	case runtime.OpFill:
		n := t.Nelements()
		a.ptr(dst).i64(n).f32(t.OpParamF32(0))
		return b.launch(&kFill, dim3{clampGrid(ceilDiv(n, blockThreads), maxGridX), 1, 1}, dim3{blockThreads, 1, 1}, 0, a)
	case runtime.OpRepeat:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(int32(t.Type))
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kRepeat, g, bl, 0, a)
	case runtime.OpSsmConv:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(s1)
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kSsmConv, g, bl, 0, a)
	case runtime.OpSsmScan:
		a.ptr(dst)
		for _, st := range t.Src[:7] {
			p, err := b.addr(st)
			if err != nil {
				return err
			}
			a.ptr(p).shape(st)
		}
		a.i32(t.OpParamI32(0)).ptr(b.status)
		x := t.Src[1]
		n := x.Ne[0] * x.Ne[1] * x.Ne[3]
		if err := b.launch(&kSsmScan, dim3{clampGrid(ceilDiv(n, ssmScanThreads), maxGridX), 1, 1}, dim3{ssmScanThreads, 1, 1}, 0, a); err != nil {
			return err
		}
		return b.checkStatus(t.Src[6], t.Src[0].Ne[3])
	case runtime.OpConcat:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(s1).i32(t.OpParamI32(0))
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		if t.Type != f32 {
			return b.launch(&kConcatAny, g, bl, 0, a.i32(int32(t.Type.Size())))
		}
		return b.launch(&kConcat, g, bl, 0, a)
	case runtime.OpNorm, runtime.OpRmsNorm, runtime.OpL2Norm:
		mode := int32(0) // k_norm_f32's mode
		switch t.Op {
		case runtime.OpRmsNorm:
			mode = 1
		case runtime.OpL2Norm:
			mode = 2
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).f32(t.OpParamF32(0)).i32(mode)
		return b.reduceLaunch(&kNorm, s0.Ne[0], s0.Nrows(), a)
	case runtime.OpRmsNormBack:
		// src0 is the output gradient dz, src1 the forward input x.
		a.ptr(dst).shape(t).ptr(src[1]).shape(s1).ptr(src[0]).shape(s0).f32(t.OpParamF32(0))
		return b.reduceLaunch(&kRmsNormBack, t.Ne[0], t.Nrows(), a)
	case runtime.OpSiluBack:
		// src0 is the output gradient, src1 the forward input x.
		a.ptr(dst).shape(t).ptr(src[1]).shape(s1).ptr(src[0]).shape(s0)
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kSiluBack, g, bl, 0, a)
	case runtime.OpSoftMax:
		maskType := int32(0)
		maskShape := t
		if s1 != nil {
			maskShape = s1
			maskType = 1
			if s1.Type == f16 {
				maskType = 2
			}
		}
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(maskShape).i32(maskType).
			f32(t.OpParamF32(0)).f32(t.OpParamF32(1)).ptr(src[2])
		return b.reduceLaunch(&kSoftMax, t.Ne[0], t.Nrows(), a)
	case runtime.OpSoftMaxBack:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).ptr(src[1]).shape(s1).f32(t.OpParamF32(0))
		return b.reduceLaunch(&kSoftMaxBack, t.Ne[0], t.Nrows(), a)
	case runtime.OpDiagMaskInf:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(t.OpParamI32(0)).f32(float32(math.Inf(-1)))
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		return b.launch(&kDiagMask, g, bl, 0, a)
	case runtime.OpGetRows:
		a.ptr(dst).shape(t).ptr(src[0]).shape(s0).i32(int32(s0.Type)).ptr(src[1]).shape(s1).ptr(b.status)
		g, bl := rowsGrid(t.Ne[0], t.Nrows())
		if err := b.launch(&kGetRows, g, bl, 0, a); err != nil {
			return err
		}
		return b.checkStatus(s1, s0.Ne[1])
	case runtime.OpMulMat:
		return b.mulMat(t, dst, src[0], src[1])
	case runtime.OpMulMatId:
		return b.mulMatID(t, dst, src[0], src[1], src[2])
	case runtime.OpRope, runtime.OpRopeBack:
		return b.rope(t, dst, src[0], src[1], src[2])
	}
	return fmt.Errorf("op %s: %w", t.Op, runtime.ErrUnsupported)
}

// activationsOK reports whether MUL_MAT(_ID) takes activations s1 with
// weights s0: f32, or f16/bf16 activations already of the weights'
// vec_dot type, as ggml's CPU backend takes them (its supports_op: src1
// f32 or the weights' vec_dot type; f16 × f16 is how ggml_conv_1d/2d
// multiply their f16 im2col). Block vec_dot types are not taken.
func activationsOK(s0, s1 *runtime.Tensor) bool {
	return s1.Type == f32 || ((s1.Type == f16 || s1.Type == runtime.TypeBF16) && s1.Type == cpukernels.VecDotType(s0.Type))
}

// roundActivations rounds the f32 activations s1 (at pb) of MUL_MAT or
// MUL_MAT_ID node t to actRounding(t)'s type into the activation
// scratch, returning where they are and their dense layout, and q8_1's
// block sums (0 for other types); s1 itself when t rounds to f32.
// Activations already of that type (f16, bf16) are widened to f32 in
// the scratch instead: the kernels read f32 activations, and the values
// need no rounding.
func (b *Backend) roundActivations(t, s1 *runtime.Tensor, pb uint64) (uint64, [runtime.MaxDims]int64, [runtime.MaxDims]uint64, uint64, error) {
	bNe, bNb := s1.Ne, s1.Nb
	var bsum uint64
	if s1.Type != f32 {
		q, err := b.quantScratch(uint64(s1.Nelements()) * 4)
		if err != nil {
			return 0, bNe, bNb, 0, err
		}
		bNb = [runtime.MaxDims]uint64{4, 4 * uint64(bNe[0])}
		bNb[2] = bNb[1] * uint64(bNe[1])
		bNb[3] = bNb[2] * uint64(bNe[2])
		a := (&args{}).ptr(q).layout(bNe, bNb).i32(int32(f32)).ptr(pb).shape(s1).i32(int32(s1.Type))
		g, bl := rowsGrid(s1.Ne[0], s1.Nrows())
		return q, bNe, bNb, 0, b.launch(&kCpy, g, bl, 0, a)
	}
	if vt := actRounding(t); vt != f32 {
		if s1.Ne[0]%vt.BlockSize() != 0 {
			return 0, bNe, bNb, 0, fmt.Errorf("%s: rows of %d activations are not whole %s blocks: %w", t.Op, s1.Ne[0], vt, runtime.ErrUnsupported)
		}
		n := uint64(s1.Nelements()) * 4
		var sums uint64 // q8_1's block sums, after the rounded values
		if vt == runtime.TypeQ8_1 {
			sums = n / 32
		}
		q, err := b.quantScratch(n + sums)
		if err != nil {
			return 0, bNe, bNb, 0, err
		}
		if sums != 0 {
			sums = q + n
		}
		bNb = [runtime.MaxDims]uint64{4, 4 * uint64(bNe[0])}
		bNb[2] = bNb[1] * uint64(bNe[1])
		bNb[3] = bNb[2] * uint64(bNe[2])
		qa := (&args{}).ptr(q).layout(bNe, bNb).ptr(pb).shape(s1).i32(int32(vt)).ptr(sums)
		units := s1.Nelements() / vt.BlockSize()
		if err := b.launch(&kRoundAct, dim3{clampGrid(ceilDiv(units, blockThreads), maxGridX), 1, 1}, dim3{blockThreads, 1, 1}, 0, qa); err != nil {
			return 0, bNe, bNb, 0, err
		}
		pb, bsum = q, sums
	}
	return pb, bNe, bNb, bsum, nil
}

// mulMatID launches MUL_MAT_ID node t after rounding its activations.
func (b *Backend) mulMatID(t *runtime.Tensor, dst, pa, pb, pids uint64) error {
	as, s1, ids := t.Src[0], t.Src[1], t.Src[2]
	pb, bNe, bNb, _, err := b.roundActivations(t, s1, pb)
	if err != nil {
		return err
	}
	a := (&args{}).ptr(dst).shape(t).ptr(pa).shape(as).i32(int32(as.Type)).ptr(pb).layout(bNe, bNb).
		ptr(pids).shape(ids).ptr(b.status)
	g, bl := rowsGrid(t.Ne[0], t.Ne[1]*t.Ne[2])
	if err := b.launch(&kMulMatID, g, bl, 0, a); err != nil {
		return err
	}
	return b.checkStatus(ids, as.Ne[2])
}

// actRounding returns the type ggml's CPU backend rounds MUL_MAT node
// t's f32 activations to before its products with weights of t's source
// 0 type (cpukernels.VecDotType: f16/bf16 for those weights, q8_0, q8_1 or
// q8_K for the block types), or f32 for none. The CPU backend rounds them
// at every shape, so this backend does too: results then agree with the
// CPU's up to the order of float sums.
func actRounding(t *runtime.Tensor) runtime.Type {
	return cpukernels.VecDotType(t.Src[0].Type)
}

func (b *Backend) mulMat(t *runtime.Tensor, dst, pa, pb uint64) error {
	s0, s1 := t.Src[0], t.Src[1]
	pb, bNe, bNb, bsum, err := b.roundActivations(t, s1, pb)
	if err != nil {
		return err
	}
	a := (&args{}).ptr(dst).shape(t).ptr(pa).shape(s0).ptr(pb).layout(bNe, bNb).ptr(bsum)
	batches := s1.Ne[2] * s1.Ne[3]
	if s1.Ne[1] == 1 {
		return b.launch(kMulVec[s0.Type], dim3{clampGrid(ceilDiv(s0.Ne[1], 8), maxGridX), clampGrid(batches, maxGridYZ), 1}, dim3{256, 1, 1}, 0, a)
	}
	if ceilDiv(s0.Ne[1], 64) > maxGridX || ceilDiv(s1.Ne[1], 64) > maxGridYZ || batches > maxGridYZ {
		return fmt.Errorf("mul_mat %v x %v too large for one launch: %w", s0.Ne, s1.Ne, runtime.ErrUnsupported)
	}
	return b.launch(kMulMat[s0.Type], dim3{uint32(ceilDiv(s0.Ne[1], 64)), uint32(ceilDiv(s1.Ne[1], 64)), uint32(batches)}, dim3{256, 1, 1}, 0, a)
}

func (b *Backend) rope(t *runtime.Tensor, dst, px, ppos, pff uint64) error {
	s0 := t.Src[0]
	nDims, mode, nCtxOrig := t.OpParamI32(1), t.OpParamI32(2), t.OpParamI32(4)
	freqBase, freqScale := t.OpParamF32(5), t.OpParamF32(6)
	extFactor, attnFactor := t.OpParamF32(7), t.OpParamF32(8)
	betaFast, betaSlow := t.OpParamF32(9), t.OpParamF32(10)
	lo, hi := cpukernels.RopeCorrDims(nDims, nCtxOrig, freqBase, betaFast, betaSlow)
	thetaScale := cpukernels.RopeThetaScale(freqBase, nDims)
	back := int32(0)
	if t.Op == runtime.OpRopeBack {
		back = 1
	}
	a := (&args{}).ptr(dst).shape(t).i32(int32(t.Type)).ptr(px).shape(s0).i32(int32(s0.Type)).ptr(ppos).ptr(pff).
		i32(nDims).i32(mode).i32(t.OpParamI32(15))
	for i := 11; i < 15; i++ {
		a.i32(t.OpParamI32(i)) // sections
	}
	a.f32(thetaScale).f32(freqScale).f32(extFactor).f32(attnFactor).f32(lo).f32(hi).i32(back)
	g, bl := rowsGrid(t.Ne[0]/2, t.Nrows())
	return b.launch(&kRope, g, bl, 0, a)
}

// checkStatus waits for the stream and turns a bad index of idx reported
// by get_rows, set_rows or add_id into an error wrapping
// runtime.ErrOutOfBounds (get_rows and add_id fill the row with NaNs,
// set_rows skips it), clearing the report; n is the index range.
func (b *Backend) checkStatus(idx *runtime.Tensor, n int64) error {
	d := b.dev.drv
	if err := d.check("cuStreamSynchronize", d.cuStreamSynchronize(b.stream)); err != nil {
		return err
	}
	st := make([]int32, 2)
	if err := d.check("cuMemcpyDtoH_v2", d.cuMemcpyDtoH(unsafe.Pointer(&st[0]), b.status, 8)); err != nil {
		return err
	}
	if st[0] == 0 {
		return nil
	}
	if err := d.check("cuMemsetD8_v2", d.cuMemsetD8(b.status, 0, 8)); err != nil {
		return err
	}
	return fmt.Errorf("row index %d of %q outside [0, %d): %w", st[1], idx.Name, n, runtime.ErrOutOfBounds)
}

// quantScratch returns device memory of at least n bytes for MulMat's
// rounded activations, kept across nodes and Computes and grown on demand.
// The caller holds b.mu and runs inside dev.do.
func (b *Backend) quantScratch(n uint64) (uint64, error) {
	if n <= b.qsize {
		return b.qbuf, nil
	}
	d := b.dev.drv
	if b.qbuf != 0 {
		// Kernels queued earlier may still read the old buffer.
		if err := d.check("cuStreamSynchronize", d.cuStreamSynchronize(b.stream)); err != nil {
			return 0, err
		}
		if err := d.check("cuMemFree_v2", d.cuMemFree(b.qbuf)); err != nil {
			return 0, err
		}
		b.qbuf, b.qsize = 0, 0
	}
	size := runtime.AlignUp(max(n, 1<<20), 1<<20)
	var p uint64
	if err := d.check("cuMemAlloc_v2", d.cuMemAlloc(&p, size)); err != nil {
		return 0, fmt.Errorf("mul_mat activation scratch of %d bytes: %w", size, err)
	}
	b.qbuf, b.qsize = p, size
	return p, nil
}
