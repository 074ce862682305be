// Package vec holds the hot float32 kernels of the CPU backend: a blocked,
// cache-aware matrix product with both operands K-contiguous (GemmNT, the
// layout of ggml's mul_mat), and element-wise and reduction kernels on
// []float32 slices (Add, Mul, Dot, Sum, Max, ExpSub, SiLU, ...), and the
// integer row dots of quantized weights with quantized activations
// (DotQ8_0Rows, DotQ4_KRows, ...).
//
// On amd64 CPUs with AVX2 and FMA the kernels run assembly, generated from
// Go by ./asmgen; everywhere else, and under the purego build tag, they run
// plain Go. The CPU features are detected once at program start (read-only
// flags); there is no other package state, so every function is safe for
// concurrent use on disjoint outputs.
//
// Element-wise kernels process min(len(dst), len(a), len(b)) elements, as
// copy does. dst may be the very same slice as a or b (same first element),
// which makes the op in place; partially overlapping slices are not
// supported.
package vec
