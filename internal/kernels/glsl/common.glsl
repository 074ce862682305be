// Shared declarations of gogml's GLSL compute kernels. Every kernel sees
// the same interface:
//
//   B[0]      the result tensor's buffer, B[1..3] its sources' buffers,
//             bound whole; all addressed in bytes through 32-bit words.
//   P[64]     parameters: a descriptor per slot s (0 = result, 1..3 =
//             sources 0..2) at P[10*s]: type, byte offset, ne[4], nb[4];
//             the node's 16 op parameters at P[40]; kernel extras at P[56].
//   Status    a word the kernels raise on bad data (row index out of range).

layout(std430, binding = 0) buffer Buf { uint w[]; } B[4];
layout(std430, binding = 4) buffer Status { uint status[]; };

uniform uint P[64];

#define T_F32 0u
#define T_F16 1u
#define T_Q4_0 2u
#define T_Q8_0 8u
#define T_I32 26u
#define T_BF16 30u

uint ty(uint s) { return P[s * 10u]; }
uint toff(uint s) { return P[s * 10u + 1u]; }
uint ne(uint s, uint d) { return P[s * 10u + 2u + d]; }
uint nb(uint s, uint d) { return P[s * 10u + 6u + d]; }
uvec4 nes(uint s) { return uvec4(ne(s, 0u), ne(s, 1u), ne(s, 2u), ne(s, 3u)); }
uint nel(uint s) { return ne(s, 0u) * ne(s, 1u) * ne(s, 2u) * ne(s, 3u); }
uint nrows(uint s) { return ne(s, 1u) * ne(s, 2u) * ne(s, 3u); }
int opi(uint i) { return int(P[40u + i]); }
float opf(uint i) { return uintBitsToFloat(P[40u + i]); }
uint ex(uint i) { return P[56u + i]; }
float exf(uint i) { return uintBitsToFloat(P[56u + i]); }

// Linear invocation index over a 2D grid of work groups.
uint gid() {
	return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}
// Linear work group index.
uint wid() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// coords splits flat element index i of slot s's shape into (i0..i3).
uvec4 coords(uint s, uint i) {
	uint n0 = ne(s, 0u), n1 = ne(s, 1u), n2 = ne(s, 2u);
	return uvec4(i % n0, (i / n0) % n1, (i / (n0 * n1)) % n2, i / (n0 * n1 * n2));
}
// rowc splits row index r of slot s into (0, i1, i2, i3).
uvec4 rowc(uint s, uint r) {
	uint n1 = ne(s, 1u), n2 = ne(s, 2u);
	return uvec4(0u, r % n1, (r / n1) % n2, r / (n1 * n2));
}
// at is the byte position of element c of slot s in its buffer.
uint at(uint s, uvec4 c) {
	return toff(s) + c.x * nb(s, 0u) + c.y * nb(s, 1u) + c.z * nb(s, 2u) + c.w * nb(s, 3u);
}

uint word(uint s, uint o) { return B[s].w[o >> 2]; }
uint u16(uint s, uint o) { return (word(s, o) >> ((o & 2u) * 8u)) & 0xffffu; }
uint u8(uint s, uint o) { return (word(s, o) >> ((o & 3u) * 8u)) & 0xffu; }
float h2f(uint h) { return unpackHalf2x16(h).x; }
float bf2f(uint h) { return uintBitsToFloat(h << 16); }

// ld loads the float element (f32, f16 or bf16) at byte o of slot s.
float ld(uint s, uint o) {
	uint t = ty(s);
	if (t == T_F32) return uintBitsToFloat(word(s, o));
	if (t == T_F16) return h2f(u16(s, o));
	return bf2f(u16(s, o));
}

#include "dequant.glsl"

// ldrow loads element i of the row that starts at byte r of slot s, for
// the float types, the q4_0 / q8_0 blocks and dequant.glsl's types.
float ldrow(uint s, uint r, uint i) {
	uint t = ty(s);
	if (isdeqx(t)) return deqx(s, t, r, i);
	if (t == T_Q8_0) {
		uint bo = r + (i >> 5) * 34u;
		int q = int(u8(s, bo + 2u + (i & 31u)) << 24) >> 24;
		return h2f(u16(s, bo)) * float(q);
	}
	if (t == T_Q4_0) {
		uint bo = r + (i >> 5) * 18u;
		uint j = i & 31u;
		uint b = u8(s, bo + 2u + (j & 15u));
		uint q = j < 16u ? (b & 15u) : (b >> 4);
		return h2f(u16(s, bo)) * float(int(q) - 8);
	}
	return ld(s, r + i * nb(s, 0u));
}

// f2bf rounds to bfloat16 (nearest, ties to even; NaN stays NaN).
uint f2bf(float v) {
	uint u = floatBitsToUint(v);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 64u;
	return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

// st16 stores 16 bits at byte o of the result without touching the other
// half of the word, which another invocation may be writing.
void st16(uint o, uint h) {
	uint sh = (o & 2u) * 8u;
	uint i = o >> 2;
	atomicAnd(B[0].w[i], ~(0xffffu << sh));
	atomicOr(B[0].w[i], (h & 0xffffu) << sh);
}

// st stores float v at byte o of the result, in the result's type.
void st(uint o, float v) {
	uint t = ty(0u);
	if (t == T_F32) {
		B[0].w[o >> 2] = floatBitsToUint(v);
	} else if (t == T_F16) {
		st16(o, packHalf2x16(vec2(v, 0.0)));
	} else {
		st16(o, f2bf(v));
	}
}

// stw stores a raw 32-bit word at byte o of the result.
void stw(uint o, uint v) { B[0].w[o >> 2] = v; }

// esize is the element size of a non-block type code (4 or 2 here).
uint esize(uint t) { return (t == T_F16 || t == T_BF16) ? 2u : 4u; }

// copyraw copies one element of the result's size from byte so of slot s
// to byte o of the result.
void copyraw(uint o, uint s, uint so) {
	if (esize(ty(0u)) == 4u) {
		stw(o, word(s, so));
	} else {
		st16(o, u16(s, so));
	}
}

// SYNC orders shared memory across the work group. In OpenGL's GLSL,
// barrier() alone only synchronizes control flow; shared writes need
// memoryBarrierShared() to be visible after it (llvmpipe really does move
// shared loads across a bare barrier()).
#define SYNC() memoryBarrierShared(); barrier()

// Workgroup reductions over a shared array of LOCAL floats. Every
// invocation of the group must call them.
#ifdef LOCAL
shared float red[LOCAL];
float wg_sum(float v) {
	uint l = gl_LocalInvocationID.x;
	red[l] = v;
	SYNC();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (l < s) red[l] += red[l + s];
		SYNC();
	}
	float r = red[0];
	SYNC();
	return r;
}
float wg_max(float v) {
	uint l = gl_LocalInvocationID.x;
	red[l] = v;
	SYNC();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (l < s) red[l] = max(red[l], red[l + s]);
		SYNC();
	}
	float r = red[0];
	SYNC();
	return r;
}
#endif
