// Package cuda is gogml's CUDA backend. It loads the NVIDIA driver
// (libcuda.so.1) at run time through purego, so the same binary builds
// without cgo or the CUDA SDK and runs on machines without a GPU, where New
// returns an error matching ErrNoDriver or ErrNoDevice.
//
// Memory: CUDA<n> device buffers (addresses are uint64 device pointers,
// never Go pointers) and CUDA_Host pinned host buffers. Kernels: the PTX
// embedded by package internal/kernels/cuda, loaded with cuModuleLoadDataEx and
// launched in graph order on one stream per backend.
//
// Threading: every driver call runs on a locked OS thread with the
// device's primary context made current first, so any goroutine may call
// any method. A Backend serialises its own calls.
//
// # Op coverage
//
// SupportsOp claims exactly the nodes below (types and
// layouts included); Compute refuses any other node with an error
// wrapping runtime.ErrUnsupported, and a scheduler places it on another
// backend. "float" is f32, f16 or bf16; "row types" are f32, f16, bf16,
// q4_0, q4_1, q5_0, q5_1, q8_0 and q2_K..q6_K. Every claimed case of the
// shared suite (backendtest.RunOps) passes on the kernel emulator
// (TestEmulatedBackendtest) and runs on a GPU when one is present
// (TestBackendtestOps).
//
//	op                                   types                                  kernel
//	NONE VIEW RESHAPE PERMUTE TRANSPOSE  any                                    (none)
//	DUP CONT CPY                         row types -> float                     k_cpy
//	                                     float -> q4_0 q4_1 q5_0 q5_1 q8_0      k_cpy_quant
//	                                     (contiguous result, whole blocks)
//	ADD SUB MUL DIV (broadcast b)        f32                                    k_binary_f32
//	                                     float, any mix                         k_binary
//	ADD1                                 f32                                    k_binary_f32
//	SCALE (with bias) SQR SQRT LOG SIN   float, one type                        k_unary
//	COS CLAMP LEAKY_RELU, UNARY (every
//	function of ggml 0.27.0 but XIELU)
//	GLU (REGLU GEGLU SWIGLU SWIGLU_OAI   float, one type; split or swapped      k_glu
//	GEGLU_ERF GEGLU_QUICK SWIGLU_CLAMP)
//	NORM RMS_NORM L2_NORM RMS_NORM_BACK  f32                                    k_norm_f32 ...
//	SUM_ROWS MEAN                        f32                                    k_sum_rows_f32
//	SUM                                  f32 rows of adjacent elements          k_sum_f32
//	FILL                                 contiguous f32                         k_fill_f32
//	REPEAT                               f32, f16                               k_repeat
//	SSM_CONV                             f32, rows of adjacent elements         k_ssm_conv_f32
//	SSM_SCAN                             f32, d_state <= 256                    k_ssm_scan_f32
//	CONCAT                               f32                                    k_concat_f32
//	                                     i8, f16, bf16, i32, i64 (not blocks)   k_concat
//	MUL_MAT                              row-type weights, f32 activations      k_mul_mat_*, k_mul_mat_vec_*
//	                                     (or f16/bf16 ones of the weights' type)
//	MUL_MAT_ID                           row-type experts, activations as above k_mul_mat_id
//	GET_ROWS                             row types -> f32, i32 ids              k_get_rows
//	SET_ROWS                             f32/f16 -> float, i32/i64 ids          k_set_rows
//	                                     f32/f16 -> q4_0 q4_1 q5_0 q5_1 q8_0    k_set_rows_quant
//	ADD_ID                               f32, i32 ids                           k_add_id_f32
//	DIAG_MASK_INF                        f32                                    k_diag_mask_f32
//	SOFT_MAX (mask f32/f16, ALiBi,       f32                                    k_soft_max_f32
//	sinks), SOFT_MAX_BACK
//	ROPE ROPE_BACK (every mode: normal,  f32, f16                               k_rope
//	neox, mrope, imrope, vision; offset,
//	partial n_dims, YaRN, freq factors)
//	FLASH_ATTN_EXT (GQA, f16 mask,       q f32; K float, q4_0 q4_1 q5_0 q5_1    k_flash_attn_ext_f32
//	ALiBi, softcap, sinks)               or q8_0; V row types
//	ARGSORT TOP_K                        f32 -> i32, rows <= 16384              k_argsort_f32
//	PAD (not circular)                   float, one type                        k_pad
//	IM2COL (1-d and 2-d)                 float input -> f32/f16                 k_im2col
//	SILU_BACK                            f32                                    k_silu_back_f32
//
// Not claimed, among the ops a llama-family decoder or a whisper-style
// encoder uses: norms on f16/bf16; CPY, SET_ROWS and FLASH_ATTN_EXT's K
// in iq4_nl (the one KV-cache type llama.cpp offers that the kernels
// lack) and CPY/SET_ROWS into the k-quants; UNARY XIELU. The ops of
// neither model family (convolutions beyond IM2COL, pooling, SSM, RWKV,
// training ops, ...) are not claimed at all.
package cuda
