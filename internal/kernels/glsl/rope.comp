// rope: one invocation per pair of elements of a result row. The first
// n_rot pairs are rotated by the angles of the row's position(s): normal
// mode adjacent elements from the offset (op parameter 15), NeoX and the
// multi-section modes elements n_dims/2 apart from the offset, vision
// elements n_dims apart over the whole row; the remaining pairs copy the
// elements outside the rotated range.
// Extras: ex(0) sin sign (float), ex(1) theta scale, ex(2)/ex(3) YaRN's
// correction range, ex(4) whether source 2 holds frequency factors.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define MODE_NORMAL 0
#define MODE_MROPE 8
#define MODE_VISION 24
#define MODE_IMROPE 40

// posi is position j of index i2 (multi-section modes: j-th group of ne2).
float posi(uint i2, uint j) {
	return float(int(word(2u, toff(2u) + (i2 + j * ne(0u, 2u)) * nb(2u, 0u))));
}

void main() {
	uint half0 = ne(0u, 0u) / 2u;
	uint i = gid();
	if (i >= half0 * nrows(0u)) return;
	uint k = i % half0;
	uvec4 c = rowc(0u, i / half0);
	int mode = opi(2u);
	uint nd = uint(opi(1u)), noff = uint(opi(15u));
	uint nrot = mode == MODE_VISION ? nd : nd / 2u;
	uint so = at(1u, c), sb = nb(1u, 0u);
	uint o = at(0u, c), db = nb(0u, 0u);
	if (k >= nrot) {
		// Copy pair k - nrot of the elements outside [noff, noff + nd).
		uint e = 2u * (k - nrot);
		if (e >= noff) e += nd;
		st(o + e * db, ld(1u, so + e * sb));
		st(o + (e + 1u) * db, ld(1u, so + (e + 1u) * sb));
		return;
	}
	// theta = pos * theta_scale^k, multiplied step by step as the
	// reference does so that rounding agrees.
	float ts = exf(1u);
	precise float theta;
	if ((mode & MODE_MROPE) == 0) {
		theta = posi(c.z, 0u);
		for (uint j = 0u; j < k; j++) theta *= ts;
	} else {
		uint s0 = uint(opi(11u)), s1 = uint(opi(12u)), s2 = uint(opi(13u)), s3 = uint(opi(14u));
		uint sd = s0 + s1 + s2 + s3, secw = s0 + s1, sece = secw + s2;
		vec4 p = vec4(posi(c.z, 0u), posi(c.z, 1u), posi(c.z, 2u), posi(c.z, 3u));
		precise vec4 th = p;
		uint sector = 0u;
		for (uint j = 0u; ; j++) {
			sector = j % sd;
			if (mode == MODE_VISION) {
				// Vision restarts each section's angle.
				if (sector == 0u) th.x = p.x;
				else if (sector == s0) th.y = p.y;
				else if (sector == secw) th.z = p.z;
				else if (sector == sece) th.w = p.w;
			}
			if (j == k) break;
			th *= ts;
		}
		if (mode == MODE_IMROPE) {
			if (sector % 3u == 1u && sector < 3u * s1) theta = th.y;
			else if (sector % 3u == 2u && sector < 3u * s2) theta = th.z;
			else if (sector % 3u == 0u && sector < 3u * s0) theta = th.x;
			else theta = th.w;
		} else {
			if (sector >= s0 && sector < secw) theta = th.y;
			else if (sector >= secw && sector < sece) theta = th.z;
			else if (sector >= sece) theta = th.w;
			else theta = th.x;
		}
	}
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
	uint j0 = noff + k, j1 = j0 + nd / 2u;
	if (mode == MODE_NORMAL) {
		j0 = noff + 2u * k;
		j1 = j0 + 1u;
	} else if (mode == MODE_VISION) {
		j0 = k;
		j1 = k + nd;
	}
	float x0 = ld(1u, so + j0 * sb), x1 = ld(1u, so + j1 * sb);
	st(o + j0 * db, x0 * cs - x1 * sn);
	st(o + j1 * db, x0 * sn + x1 * cs);
}
