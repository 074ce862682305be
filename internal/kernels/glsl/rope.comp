// rope: one invocation per pair of elements of a result row. Pairs below
// n_dims are rotated by the angle of the row's position (normal mode:
// adjacent elements; NeoX: elements n_dims/2 apart); the rest is copied.
// Extras: ex(0) sin sign (float), ex(1) theta scale, ex(2)/ex(3) YaRN's
// correction range, ex(4) whether source 2 holds frequency factors.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

void main() {
	uint half0 = ne(0u, 0u) / 2u;
	uint i = gid();
	if (i >= half0 * nrows(0u)) return;
	uint k = i % half0;
	uvec4 c = rowc(0u, i / half0);
	uint nd = uint(opi(1u));
	uint so = at(1u, c), sb = nb(1u, 0u);
	uint o = at(0u, c), db = nb(0u, 0u);
	if (2u * k >= nd) {
		st(o + 2u * k * db, ld(1u, so + 2u * k * sb));
		st(o + (2u * k + 1u) * db, ld(1u, so + (2u * k + 1u) * sb));
		return;
	}
	int pos = int(word(2u, toff(2u) + c.z * nb(2u, 0u)));
	// theta = pos * theta_scale^k, multiplied step by step as the
	// reference does so that rounding agrees.
	precise float theta = float(pos);
	float ts = exf(1u);
	for (uint j = 0u; j < k; j++) theta *= ts;
	float ff = 1.0;
	if (ex(4u) != 0u) ff = ld(3u, toff(3u) + k * nb(3u, 0u));
	float extrap = theta / ff;
	float interp = opf(6u) * extrap;
	float th = interp;
	float mscale = opf(8u);
	float ext = opf(7u);
	if (ext != 0.0) {
		float y = (float(k) - exf(2u)) / max(0.001, exf(3u) - exf(2u));
		float ramp = (1.0 - min(1.0, max(0.0, y))) * ext;
		th = interp * (1.0 - ramp) + extrap * ramp;
		mscale *= 1.0 + 0.1 * log(1.0 / opf(6u));
	}
	float cs = cos(th) * mscale;
	float sn = sin(th) * mscale * exf(0u);
	uint j0 = 2u * k, j1 = 2u * k + 1u;
	if (opi(2u) == 2) {
		j0 = k;
		j1 = k + nd / 2u;
	}
	float x0 = ld(1u, so + j0 * sb), x1 = ld(1u, so + j1 * sb);
	st(o + j0 * db, x0 * cs - x1 * sn);
	st(o + j1 * db, x0 * sn + x1 * cs);
}
