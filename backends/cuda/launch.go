package cuda

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// argKind is the C type of one kernel parameter; each has a fixed width
// and alignment that match the PTX parameter the compiler generates.
type argKind uint8

const (
	argPtr   argKind = iota // device address (char *): .u64, 8 bytes
	argShape                // struct shape4 by value: .align 8 .b8 [64]
	argI32                  // int: .u32 (or .s32), 4 bytes
	argF32                  // float: .f32, 4 bytes
	argI64                  // long long: .u64 (or .s64), 8 bytes
)

// shapeBytes is sizeof(struct shape4): ne[4] and nb[4] as 64-bit integers.
const shapeBytes = 64

// size and align of each argument kind.
func (k argKind) size() int {
	switch k {
	case argShape:
		return shapeBytes
	case argI32, argF32:
		return 4
	}
	return 8
}

func (k argKind) align() int {
	if k == argI32 || k == argF32 {
		return 4
	}
	return 8
}

func (k argKind) String() string {
	return [...]string{"ptr", "shape4", "i32", "f32", "i64"}[k]
}

// kernel describes one PTX entry: its module (file name without .ptx), its
// name and its parameter list in order. The descriptors are checked
// against the PTX by a test.
type kernel struct {
	module string
	name   string
	args   []argKind
}

// Short names for the descriptor table below.
const (
	aP = argPtr
	aS = argShape
	aI = argI32
	aF = argF32
	aL = argI64
)

// Kernel descriptors, one per extern "C" __global__ function in
// internal/kernels/cuda/*.cu.
var (
	kBinary      = kernel{"elementwise", "k_binary_f32", []argKind{aP, aS, aP, aS, aP, aS, aI}}
	kBinaryAny   = kernel{"elementwise", "k_binary", []argKind{aP, aS, aI, aP, aS, aI, aP, aS, aI, aI}}
	kConcatAny   = kernel{"elementwise", "k_concat", []argKind{aP, aS, aP, aS, aP, aS, aI, aI}}
	kUnary       = kernel{"elementwise", "k_unary", []argKind{aP, aS, aI, aP, aS, aI, aI, aF, aF}}
	kGlu         = kernel{"elementwise", "k_glu", []argKind{aP, aS, aP, aS, aP, aS, aI, aI, aI, aF, aF}}
	kSetRows     = kernel{"elementwise", "k_set_rows", []argKind{aP, aS, aI, aP, aS, aI, aP, aS, aI, aP}}
	kCpyQuant    = kernel{"elementwise", "k_cpy_quant", []argKind{aP, aI, aP, aS, aI}}
	kSetRowsQ    = kernel{"elementwise", "k_set_rows_quant", []argKind{aP, aS, aI, aP, aS, aI, aP, aS, aI, aP}}
	kPad         = kernel{"elementwise", "k_pad", []argKind{aP, aS, aP, aS, aI, aI, aI, aI, aI}}
	kIm2col      = kernel{"elementwise", "k_im2col", []argKind{aP, aS, aI, aP, aS, aI, aI, aI, aI, aI, aI, aI, aI, aI, aI}}
	kAddID       = kernel{"elementwise", "k_add_id_f32", []argKind{aP, aS, aP, aS, aP, aS, aP, aS, aP}}
	kArgsort     = kernel{"reduce", "k_argsort_f32", []argKind{aP, aS, aP, aS, aI, aI}}
	kMulMatID    = kernel{"matmul", "k_mul_mat_id", []argKind{aP, aS, aP, aS, aI, aP, aS, aP, aS, aP}}
	kFlashAttn   = kernel{"reduce", "k_flash_attn_ext_f32", []argKind{aP, aS, aP, aS, aP, aS, aI, aP, aS, aI, aP, aS, aP, aF, aF, aF}}
	kSiluBack    = kernel{"elementwise", "k_silu_back_f32", []argKind{aP, aS, aP, aS, aP, aS}}
	kRepeat      = kernel{"elementwise", "k_repeat", []argKind{aP, aS, aP, aS, aI}}
	kSsmConv     = kernel{"elementwise", "k_ssm_conv_f32", []argKind{aP, aS, aP, aS, aP, aS}}
	kSsmScan     = kernel{"elementwise", "k_ssm_scan_f32", []argKind{aP, aP, aS, aP, aS, aP, aS, aP, aS, aP, aS, aP, aS, aP, aS, aI, aP}}
	kConcat      = kernel{"elementwise", "k_concat_f32", []argKind{aP, aS, aP, aS, aP, aS, aI}}
	kCpy         = kernel{"elementwise", "k_cpy", []argKind{aP, aS, aI, aP, aS, aI}}
	kGetRows     = kernel{"elementwise", "k_get_rows", []argKind{aP, aS, aP, aS, aI, aP, aS, aP}}
	kDiagMask    = kernel{"elementwise", "k_diag_mask_f32", []argKind{aP, aS, aP, aS, aI, aF}}
	kFill        = kernel{"elementwise", "k_fill_f32", []argKind{aP, aL, aF}}
	kSumRows     = kernel{"reduce", "k_sum_rows_f32", []argKind{aP, aS, aP, aS, aI}}
	kSum         = kernel{"reduce", "k_sum_f32", []argKind{aP, aP, aS}}
	kNorm        = kernel{"reduce", "k_norm_f32", []argKind{aP, aS, aP, aS, aF, aI}}
	kRmsNormBack = kernel{"reduce", "k_rms_norm_back_f32", []argKind{aP, aS, aP, aS, aP, aS, aF}}
	kSoftMax     = kernel{"reduce", "k_soft_max_f32", []argKind{aP, aS, aP, aS, aP, aS, aI, aF, aF, aP}}
	kSoftMaxBack = kernel{"reduce", "k_soft_max_back_f32", []argKind{aP, aS, aP, aS, aP, aS, aF}}
	kRoundAct    = kernel{"matmul", "k_round_act_f32", []argKind{aP, aS, aP, aS, aI, aP}}
	kRope        = kernel{"rope", "k_rope", []argKind{aP, aS, aI, aP, aS, aI, aP, aP, aI, aI, aI, aI, aI, aI, aI, aF, aF, aF, aF, aF, aF, aI}}
)

// allKernels lists every descriptor, for loading and for the PTX check.
var allKernels = append([]*kernel{
	&kBinary, &kBinaryAny, &kConcatAny, &kUnary, &kSiluBack, &kRepeat, &kSsmConv, &kSsmScan, &kConcat, &kCpy, &kGetRows, &kDiagMask, &kFill,
	&kSumRows, &kSum, &kNorm, &kRmsNormBack, &kSoftMax, &kSoftMaxBack,
	&kRoundAct, &kRope, &kGlu, &kSetRows, &kCpyQuant, &kSetRowsQ, &kPad, &kIm2col, &kAddID, &kArgsort, &kFlashAttn, &kMulMatID,
}, allMulMat()...)

// allMulMat lists kMulMat's and kMulVec's descriptors in matRowTypes'
// order, for allKernels.
func allMulMat() []*kernel {
	var ks []*kernel
	for _, typ := range matRowTypes {
		ks = append(ks, kMulMat[typ], kMulVec[typ])
	}
	return ks
}

// matRowTypes are the weight (source 0) types of MUL_MAT and GET_ROWS:
// the element types load_elem in common.cuh reads.
var matRowTypes = []runtime.Type{
	runtime.TypeF32, runtime.TypeF16, runtime.TypeBF16,
	runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0,
	runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K,
}

// kMulMat and kMulVec are MUL_MAT's tiled and matrix-vector kernels by
// weight type (k_mul_mat_TYPE, k_mul_mat_vec_TYPE in matmul.cu); read only.
var kMulMat, kMulVec = mulMatKernels()

func mulMatKernels() (mat, vec map[runtime.Type]*kernel) {
	mat, vec = map[runtime.Type]*kernel{}, map[runtime.Type]*kernel{}
	p := []argKind{aP, aS, aP, aS, aP, aS, aP}
	for _, typ := range matRowTypes {
		mat[typ] = &kernel{"matmul", "k_mul_mat_" + typ.String(), p}
		vec[typ] = &kernel{"matmul", "k_mul_mat_vec_" + typ.String(), p}
	}
	return mat, vec
}

// maxArgBytes bounds a packed parameter buffer (the driver allows 4 KiB).
const maxArgBytes = 4096

// args packs kernel arguments the way the C compiler lays out a kernel's
// parameters: each at the next multiple of its alignment. It records the
// kinds so that a launch can check them against the kernel's descriptor.
type args struct {
	buf   []byte
	kinds []argKind
}

func (a *args) put(k argKind) []byte {
	off := (len(a.buf) + k.align() - 1) &^ (k.align() - 1)
	for len(a.buf) < off+k.size() {
		a.buf = append(a.buf, 0)
	}
	a.kinds = append(a.kinds, k)
	return a.buf[off : off+k.size()]
}

// ptr appends a device address.
func (a *args) ptr(p uint64) *args {
	binary.LittleEndian.PutUint64(a.put(argPtr), p)
	return a
}

// shape appends t's ne and nb as a struct shape4.
func (a *args) shape(t *runtime.Tensor) *args { return a.layout(t.Ne, t.Nb) }

// layout appends ne and nb as a struct shape4.
func (a *args) layout(ne [runtime.MaxDims]int64, nb [runtime.MaxDims]uint64) *args {
	b := a.put(argShape)
	for i := 0; i < runtime.MaxDims; i++ {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(ne[i]))
		binary.LittleEndian.PutUint64(b[32+8*i:], nb[i])
	}
	return a
}

// i32 appends a C int.
func (a *args) i32(v int32) *args {
	binary.LittleEndian.PutUint32(a.put(argI32), uint32(v))
	return a
}

// f32 appends a C float.
func (a *args) f32(v float32) *args {
	binary.LittleEndian.PutUint32(a.put(argF32), math.Float32bits(v))
	return a
}

// i64 appends a C long long.
func (a *args) i64(v int64) *args {
	binary.LittleEndian.PutUint64(a.put(argI64), uint64(v))
	return a
}

// check reports whether the packed kinds are exactly k's parameters.
func (a *args) check(k *kernel) error {
	if len(a.kinds) != len(k.args) {
		return fmt.Errorf("cuda: kernel %s takes %d arguments, %d packed", k.name, len(k.args), len(a.kinds))
	}
	for i, want := range k.args {
		if a.kinds[i] != want {
			return fmt.Errorf("cuda: kernel %s argument %d is %s, packed %s", k.name, i, want, a.kinds[i])
		}
	}
	if len(a.buf) > maxArgBytes {
		return fmt.Errorf("cuda: kernel %s: %d bytes of arguments, at most %d", k.name, len(a.buf), maxArgBytes)
	}
	return nil
}

// dim3 is a grid or block size.
type dim3 struct{ x, y, z uint32 }
