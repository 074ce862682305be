// The four-row dot kernels of qdot512_amd64.s prefetch (as asmgen makes
// f16dot_amd64.s's AVX-512 one do), at
// each step, the same place in the next four rows (those of the next call
// over a tile of rows): a decode
// product streams its weights from memory, and the rows a call starts on
// must already be on their way (prefetching 512 bytes ahead in the
// call's own rows left each call's start cold, which cost 3-4x the time
// with weights beyond the cache). Prefetches never fault, so the rows
// past the last are harmless. R12 and R13 point at rows 4 and 6 below.
#define NEXT4SETUP \
	LEAQ (R10)(DI*1), R12 \
	LEAQ (R12)(DI*2), R13

#define NEXT4PF \
	PREFETCHT0 (R12) \
	PREFETCHT0 (R12)(DI*1) \
	PREFETCHT0 (R13) \
	PREFETCHT0 (R13)(DI*1)
