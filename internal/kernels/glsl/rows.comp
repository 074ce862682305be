// rows: one work group per result row, for the ops that reduce or
// normalize along dimension 0. ex(0) selects the op. CROSS_ENTROPY_LOSS
// (F_CE) runs as one work group that walks every row of its sources;
// CROSS_ENTROPY_LOSS_BACK (F_CE_BACK) takes the gradient scalar in slot 1,
// the logits in slot 2 and the labels in slot 3.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

#define F_SUM_ROWS 0u
#define F_MEAN 1u
#define F_NORM 2u
#define F_RMS_NORM 3u
#define F_SOFT_MAX 4u
#define F_SOFT_MAX_BACK 5u
#define F_RMS_NORM_BACK 6u
#define F_L2_NORM 7u
#define F_CE_BACK 8u
#define F_CE 9u

void main() {
	uint r = wid();
	if (r >= nrows(0u)) return; // uniform over the group
	uint l = gl_LocalInvocationID.x;
	uvec4 c = rowc(0u, r);
	uint n = ne(1u, 0u);
	uint so = at(1u, c), sb = nb(1u, 0u);
	uint o = at(0u, c), db = nb(0u, 0u);
	uint f = ex(0u);
	float fn = float(n);

	if (f == F_CE || f == F_CE_BACK) {
		// Logits x (slot 1 for F_CE, 2 for F_CE_BACK) and labels y (2 / 3).
		uint xs = f == F_CE ? 1u : 2u, ys = xs + 1u;
		uint m = ne(xs, 0u), rows = nrows(xs);
		float total = 0.0;
		for (uint rr = (f == F_CE ? 0u : r); rr < (f == F_CE ? rows : r + 1u); rr++) {
			uvec4 rc = rowc(xs, rr);
			uint xo = at(xs, rc), xb = nb(xs, 0u), yo = at(ys, rc), yb = nb(ys, 0u);
			float mx = uintBitsToFloat(0xff800000u);
			for (uint i = l; i < m; i += LOCAL) mx = max(mx, ld(xs, xo + i * xb));
			mx = wg_max(mx);
			float s = 0.0;
			for (uint i = l; i < m; i += LOCAL) s += exp(ld(xs, xo + i * xb) - mx);
			s = wg_sum(s);
			if (f == F_CE_BACK) {
				float inv = 1.0 / s, g = ld(1u, toff(1u)) / float(rows);
				for (uint i = l; i < m; i += LOCAL) {
					st(o + i * db, (exp(ld(xs, xo + i * xb) - mx) * inv - ld(ys, yo + i * yb)) * g);
				}
				return;
			}
			float ls = log(s), d = 0.0;
			for (uint i = l; i < m; i += LOCAL) d += (ld(xs, xo + i * xb) - mx - ls) * ld(ys, yo + i * yb);
			total += wg_sum(d);
		}
		if (l == 0u) st(toff(0u), total * (-1.0 / float(rows)));
		return;
	}

	if (f == F_SUM_ROWS || f == F_MEAN) {
		float s = 0.0;
		for (uint i = l; i < n; i += LOCAL) s += ld(1u, so + i * sb);
		s = wg_sum(s);
		if (f == F_MEAN) s /= fn;
		if (l == 0u) st(o, s);
		return;
	}
	if (f == F_NORM) {
		float s = 0.0;
		for (uint i = l; i < n; i += LOCAL) s += ld(1u, so + i * sb);
		float mean = wg_sum(s) / fn;
		float s2 = 0.0;
		for (uint i = l; i < n; i += LOCAL) {
			float v = ld(1u, so + i * sb) - mean;
			s2 += v * v;
		}
		float scale = 1.0 / sqrt(wg_sum(s2) / fn + opf(0u));
		for (uint i = l; i < n; i += LOCAL) st(o + i * db, (ld(1u, so + i * sb) - mean) * scale);
		return;
	}
	if (f == F_L2_NORM) {
		float s2 = 0.0;
		for (uint i = l; i < n; i += LOCAL) {
			float v = ld(1u, so + i * sb);
			s2 += v * v;
		}
		float scale = 1.0 / max(sqrt(wg_sum(s2)), opf(0u));
		for (uint i = l; i < n; i += LOCAL) st(o + i * db, ld(1u, so + i * sb) * scale);
		return;
	}
	if (f == F_RMS_NORM) {
		float s2 = 0.0;
		for (uint i = l; i < n; i += LOCAL) {
			float v = ld(1u, so + i * sb);
			s2 += v * v;
		}
		float scale = 1.0 / sqrt(wg_sum(s2) / fn + opf(0u));
		for (uint i = l; i < n; i += LOCAL) st(o + i * db, ld(1u, so + i * sb) * scale);
		return;
	}
	if (f == F_SOFT_MAX) {
		// w = x*scale + slope*mask; exp(w - max) / sum.
		float scale = opf(0u);
		bool mask = ex(1u) != 0u;
		uint mo = 0u, mb = 0u;
		if (mask) {
			mo = at(2u, uvec4(0u, c.y, c.z % ne(2u, 2u), c.w % ne(2u, 3u)));
			mb = nb(2u, 0u);
		}
		float slope = 1.0;
		if (opf(1u) > 0.0) {
			uint h = c.z, nl = ex(4u);
			slope = h < nl ? pow(exf(2u), float(h + 1u)) : pow(exf(3u), float(2u * (h - nl) + 1u));
		}
		float mx = uintBitsToFloat(0xff800000u);
		for (uint i = l; i < n; i += LOCAL) {
			float w = ld(1u, so + i * sb) * scale;
			if (mask) w += slope * ld(2u, mo + i * mb);
			mx = max(mx, w);
		}
		mx = wg_max(mx);
		// Sinks (ex(5)): one logit per head, normalized with the row.
		bool sinks = ex(5u) != 0u;
		float sink = sinks ? ld(3u, toff(3u) + c.z * nb(3u, 0u)) : 0.0;
		if (sinks) mx = max(mx, sink);
		float s = 0.0;
		for (uint i = l; i < n; i += LOCAL) {
			float w = ld(1u, so + i * sb) * scale;
			if (mask) w += slope * ld(2u, mo + i * mb);
			s += exp(w - mx);
		}
		s = wg_sum(s);
		if (sinks) s += exp(sink - mx);
		float inv = 1.0 / s;
		for (uint i = l; i < n; i += LOCAL) {
			float w = ld(1u, so + i * sb) * scale;
			if (mask) w += slope * ld(2u, mo + i * mb);
			st(o + i * db, exp(w - mx) * inv);
		}
		return;
	}
	// Two-source row ops: source 0 is the incoming gradient, source 1 the
	// forward value (y for soft_max_back, x for rms_norm_back).
	uint yo = at(2u, c), yb = nb(2u, 0u);
	if (f == F_SOFT_MAX_BACK) {
		float d = 0.0;
		for (uint i = l; i < n; i += LOCAL) d += ld(1u, so + i * sb) * ld(2u, yo + i * yb);
		d = wg_sum(d);
		float scale = opf(0u);
		for (uint i = l; i < n; i += LOCAL) {
			float y = ld(2u, yo + i * yb);
			st(o + i * db, scale * y * (ld(1u, so + i * sb) - d));
		}
		return;
	}
	// F_RMS_NORM_BACK
	float sxx = 0.0, sxdz = 0.0;
	for (uint i = l; i < n; i += LOCAL) {
		float x = ld(2u, yo + i * yb);
		sxx += x * x;
		sxdz += x * ld(1u, so + i * sb);
	}
	sxx = wg_sum(sxx);
	sxdz = wg_sum(sxdz);
	float eps = opf(0u);
	float rrms = 1.0 / sqrt(sxx / fn + eps);
	float k = -sxdz / (sxx + eps * fn);
	for (uint i = l; i < n; i += LOCAL) {
		float x = ld(2u, yo + i * yb);
		st(o + i * db, (ld(1u, so + i * sb) + x * k) * rrms);
	}
}
