// elems: moves whole elements (or quantized blocks) of any size, one
// invocation per result unit: ex(1) is the unit's size in bytes, ex(2) the
// elements per unit along dimension 0 (the block size; 1 for element
// types). ex(0) selects where a unit comes from:
//   0 the same coordinates modulo source 0's shape (REPEAT),
//   1 the same flat index in source 0 (DUP/CONT between shapes),
//   2 source 0 or, past it along dimension op[0], source 1 (CONCAT).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

// st8 stores one byte at byte o of the result, leaving its neighbours.
void st8(uint o, uint v) {
	uint sh = (o & 3u) * 8u;
	uint i = o >> 2;
	atomicAnd(B[0].w[i], ~(0xffu << sh));
	atomicOr(B[0].w[i], (v & 0xffu) << sh);
}

// ushape is slot s's shape in units.
uvec4 ushape(uint s) { return uvec4(ne(s, 0u) / ex(2u), ne(s, 1u), ne(s, 2u), ne(s, 3u)); }

uvec4 ucoords(uvec4 n, uint i) {
	return uvec4(i % n.x, (i / n.x) % n.y, (i / (n.x * n.y)) % n.z, i / (n.x * n.y * n.z));
}

// Copy the unit at byte so of source slot 1 or 2 (a constant at each call,
// as GLSL indexes buffer arrays only with uniform values) to byte o.
#define COPY_UNIT(S, o, so) { \
	uint es_ = ex(1u); \
	if (es_ == 1u) { \
		st8(o, u8(S, so)); \
	} else if ((es_ & 3u) == 0u && ((o | so) & 3u) == 0u) { \
		for (uint k_ = 0u; k_ < es_; k_ += 4u) stw(o + k_, word(S, so + k_)); \
	} else { \
		for (uint k_ = 0u; k_ < es_; k_ += 2u) st16(o + k_, u16(S, so + k_)); \
	} \
}

void main() {
	uint i = gid();
	uvec4 n = ushape(0u);
	if (i >= n.x * n.y * n.z * n.w) return;
	uvec4 c = ucoords(n, i);
	uint o = at(0u, c);
	uint mode = ex(0u);
	if (mode == 0u) {
		uint so = at(1u, c % ushape(1u));
		COPY_UNIT(1u, o, so);
		return;
	}
	if (mode == 1u) {
		uint so = at(1u, ucoords(ushape(1u), i));
		COPY_UNIT(1u, o, so);
		return;
	}
	uint dim = uint(opi(0u));
	uint split = ushape(1u)[dim];
	if (c[dim] < split) {
		uint so = at(1u, c);
		COPY_UNIT(1u, o, so);
	} else {
		uvec4 sc = c;
		sc[dim] -= split;
		uint so = at(2u, sc);
		COPY_UNIT(2u, o, so);
	}
}
