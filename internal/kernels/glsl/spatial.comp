// spatial: ops that gather a window of source elements for each result
// element (one invocation per result element, all in f32 arithmetic with
// ggml's CPU order); ex(0) selects the op:
//   0 UPSCALE: source 0 resized to the result's shape; op[0] is ggml's
//     scale mode (low byte 0 nearest, 1 bilinear, 2 bicubic; flag 1<<8
//     align corners, 1<<9 antialias, bilinear only).
//   1 POOL_1D: op[0] 0 max / 1 avg, kernel op[1], stride op[2], pad
//     op[3]; max as std::max (NaN-free windows), avg over the window's
//     elements inside the row.
//   2 POOL_2D: op[0] max / avg, kernels op[1..2], strides op[3..4], pads
//     op[5..6]; max by x > v, avg divided by k0·k1 as ggml.
//   3 CONV_TRANSPOSE_1D: kernel source 0 {K, OC, C}, input source 1
//     {L, C, N}, stride op[0] (pad 0, dilation 1): the sum over input
//     positions (ascending) of the dot product over channels, the input
//     rounded to f16 when the kernel is f16.
//   4 SSM_CONV: result (i, t, s) = sum over j of x(t + j, i, s) c(j, i),
//     x source 0, c source 1, j ascending.
//   5 TIMESTEP_EMBEDDING: result (j, i) from timestep x(i) of source 0:
//     cos, then sin, of x exp(-ln(op[1]) k / half) for k < half =
//     op[0] / 2, zeros after 2 half.
//   6 OUT_PROD: result (i0, i1, i2, i3) = sum over k of a(i0, k, i2/r2,
//     i3/r3) b(i1, k, i2, i3), k ascending; a of any ldrow type.
//   7 GET_ROWS_BACK: result (j, r) = the sum of row i of source 0 over
//     every i with ids(i) == r (source 1, i32); an id out of range raises
//     status[0].
//   8 CONV_2D_DW: kernel source 0 {KW, KH, 1, C}, input source 1 {W, H,
//     C, N}: strides op[0..1], pads op[2..3], dilations op[4..5]; the sum
//     over kernel rows, then columns, inside the input.
//   9 CONV_TRANSPOSE_2D: kernel source 0 {KW, KH, OC, C}, input source 1
//     {W, H, C, N}, stride op[0]: over input rows, then columns, the dot
//     product over channels (input rounded to f16 for an f16 kernel).
//  10 COL2IM_1D: columns source 0 {K·OC, T}: result (o, oc) sums column
//     entries (oc·K + j, i) with j = o + pad - i·stride in [0, K), i
//     ascending; stride op[0], OC op[1], pad op[2].
//  11 CONV_2D: kernel source 0 {KW, KH, C, OC}, input source 1 {W, H, C,
//     N}, strides op[0..1], pads op[2..3], dilations op[4..5]: the sum over
//     channels, kernel rows and columns (ggml's patch order), the input
//     rounded to f16 for an f16 kernel.
//  12 IM2COL_3D: result (e, ow, oh, od + OD·n) is input source 0 at (ow·s0
//     + x·d0 - p0, oh·s1 + y·d1 - p1, od·s2 + z·d2 - p2, n·C + c), 0
//     outside, for e = ((c·KD + z)·KH + y)·KW + x; s, p, d are op[0..8],
//     ex(1..4) KW, KH, KD and OD.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define M_UPSCALE 0u
#define M_POOL1D 1u
#define M_POOL2D 2u
#define M_CONVT1D 3u
#define M_SSM_CONV 4u
#define M_TIMESTEP 5u
#define M_OUT_PROD 6u
#define M_GET_ROWS_BACK 7u
#define M_CONV2D_DW 8u
#define M_CONVT2D 9u
#define M_COL2IM1D 10u
#define M_CONV2D 11u
#define M_IM2COL3D 12u
#define M_CONV3D 13u

#define FLT_MAX 3.402823466e+38

float src2(uint x, uint y, uint z, uint w) { return ld(1u, at(1u, uvec4(x, y, z, w))); }

int clampi(int v, uint n) { return clamp(v, 0, int(n) - 1); }
float f16round(float x) { return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x; }

float cubic1(float x) { return ((-0.75 + 2.0) * x - (-0.75 + 3.0)) * x * x + 1.0; }
float cubic2(float x) { return ((-0.75 * x - 5.0 * -0.75) * x + 8.0 * -0.75) * x - 4.0 * -0.75; }
float bicubic(float p0, float p1, float p2, float p3, float x) {
	return p0 * cubic2(x + 1.0) + p1 * cubic1(x) + p2 * cubic1(1.0 - x) + p3 * cubic2(2.0 - x);
}
float tri(float x) { return max(1.0 - abs(x), 0.0); }

float upscale(uvec4 c) {
	uvec4 sn = nes(1u), dn = nes(0u);
	uint flags = uint(opi(0u));
	vec4 sf = vec4(dn) / vec4(sn);
	float off = 0.5;
	if ((flags & 256u) != 0u) {
		off = 0.0;
		if (dn.x > 1u && sn.x > 1u) sf.x = float(dn.x - 1u) / float(sn.x - 1u);
		if (dn.y > 1u && sn.y > 1u) sf.y = float(dn.y - 1u) / float(sn.y - 1u);
	}
	uint j2 = uint(float(c.z) / sf.z), j3 = uint(float(c.w) / sf.w);
	uint mode = flags & 255u;
	if (mode == 0u) return src2(uint(float(c.x) / sf.x), uint(float(c.y) / sf.y), j2, j3);
	if (mode == 1u && (flags & 512u) != 0u) {
		float sup1 = max(1.0, 1.0 / sf.y), sup0 = max(1.0, 1.0 / sf.x);
		float inv1 = 1.0 / sup1, inv0 = 1.0 / sup0;
		float y = (float(c.y) + off) / sf.y, x = (float(c.x) + off) / sf.x;
		int ylo = max(int(y - sup1 + off), 0), yhi = min(int(y + sup1 + off), int(sn.y));
		int xlo = max(int(x - sup0 + off), 0), xhi = min(int(x + sup0 + off), int(sn.x));
		float val = 0.0, total = 0.0;
		for (int sy = ylo; sy < yhi; sy++) {
			float wy = tri((float(sy) - y + off) * inv1);
			for (int sx = xlo; sx < xhi; sx++) {
				float w = tri((float(sx) - x + off) * inv0) * wy;
				if (w <= 0.0) continue;
				val += src2(uint(sx), uint(sy), j2, j3) * w;
				total += w;
			}
		}
		return total > 0.0 ? val / total : val;
	}
	float y = (float(c.y) + off) / sf.y - off, x = (float(c.x) + off) / sf.x - off;
	int y0 = int(floor(y)), x0 = int(floor(x));
	if (mode == 2u) {
		float dy = y - float(y0), dx = x - float(x0);
		float col[4];
		for (int j = 0; j < 4; j++) {
			uint yy = uint(clampi(y0 + j - 1, sn.y));
			col[j] = bicubic(src2(uint(clampi(x0 - 1, sn.x)), yy, j2, j3), src2(uint(clampi(x0, sn.x)), yy, j2, j3),
				src2(uint(clampi(x0 + 1, sn.x)), yy, j2, j3), src2(uint(clampi(x0 + 2, sn.x)), yy, j2, j3), dx);
		}
		return bicubic(col[0], col[1], col[2], col[3], dy);
	}
	uint y1 = uint(clampi(y0 + 1, sn.y)), x1 = uint(clampi(x0 + 1, sn.x));
	uint yc = uint(clampi(y0, sn.y)), xc = uint(clampi(x0, sn.x));
	float dy = clamp(y - float(yc), 0.0, 1.0), dx = clamp(x - float(xc), 0.0, 1.0);
	float a = src2(xc, yc, j2, j3), b = src2(x1, yc, j2, j3);
	float cc = src2(xc, y1, j2, j3), d = src2(x1, y1, j2, j3);
	return a * (1.0 - dx) * (1.0 - dy) + b * dx * (1.0 - dy) + cc * (1.0 - dx) * dy + d * dx * dy;
}

float pool1d(uvec4 c) {
	bool mx = opi(0u) == 0;
	int k0 = opi(1u), s0 = opi(2u), p0 = opi(3u);
	float res = mx ? -FLT_MAX : 0.0;
	int count = 0;
	int j0 = int(c.x) * s0 - p0;
	for (int j = max(j0, 0); j < min(j0 + k0, int(ne(1u, 0u))); j++) {
		float v = src2(uint(j), c.y, c.z, c.w);
		if (!mx) res += v;
		else if (!(v < res)) res = v;
		count++;
	}
	if (!mx) res = count > 0 ? res / float(count) : 0.0;
	return res;
}

float pool2d(uvec4 c) {
	bool mx = opi(0u) == 0;
	int k0 = opi(1u), k1 = opi(2u), s0 = opi(3u), s1 = opi(4u), p0 = opi(5u), p1 = opi(6u);
	float v = mx ? -FLT_MAX : 0.0;
	int y0 = int(c.y) * s1 - p1, x0 = int(c.x) * s0 - p0;
	for (int iy = max(y0, 0); iy < min(y0 + k1, int(ne(1u, 1u))); iy++) {
		for (int ix = max(x0, 0); ix < min(x0 + k0, int(ne(1u, 0u))); ix++) {
			float x = src2(uint(ix), uint(iy), c.z, c.w);
			if (!mx) v += x;
			else if (x > v) v = x;
		}
	}
	if (!mx) v /= float(k0 * k1);
	return v;
}

float convt1d(uvec4 c) {
	// Result (o, oc, n): input positions i with 0 <= o - i·s < K.
	uint s = uint(opi(0u)), kw = ne(1u, 0u), cin = ne(1u, 2u), l = ne(2u, 0u);
	bool round16 = ty(1u) == T_F16;
	uint ilo = c.x + 1u > kw ? (c.x + 1u - kw + s - 1u) / s : 0u;
	uint ihi = min(c.x / s + 1u, l);
	float acc = 0.0;
	for (uint i = ilo; i < ihi; i++) {
		uint j = c.x - i * s;
		float v = 0.0;
		for (uint ch = 0u; ch < cin; ch++) {
			float x = ld(2u, at(2u, uvec4(i, ch, c.z, 0u)));
			if (round16) x = f16round(x);
			v += x * ld(1u, at(1u, uvec4(j, c.y, ch, 0u)));
		}
		acc += v;
	}
	return acc;
}

float ssmconv(uvec4 c) {
	float sum = 0.0;
	for (uint j = 0u; j < ne(2u, 0u); j++) {
		sum += ld(1u, at(1u, uvec4(c.y + j, c.x, c.z, 0u))) * ld(2u, at(2u, uvec4(j, c.x, 0u, 0u)));
	}
	return sum;
}

float timestep(uvec4 c) {
	uint half_ = uint(opi(0u)) / 2u;
	if (c.x >= 2u * half_) return 0.0;
	float x = ld(1u, at(1u, uvec4(c.y, 0u, 0u, 0u)));
	uint k = c.x < half_ ? c.x : c.x - half_;
	float freq = exp(-log(float(opi(1u))) * float(k) / float(half_));
	float arg = x * freq;
	return c.x < half_ ? cos(arg) : sin(arg);
}

float outprod(uvec4 c) {
	uint r2 = ne(2u, 2u) / ne(1u, 2u), r3 = ne(2u, 3u) / ne(1u, 3u);
	float sum = 0.0;
	for (uint k = 0u; k < ne(1u, 1u); k++) {
		uint ar = toff(1u) + k * nb(1u, 1u) + (c.z / r2) * nb(1u, 2u) + (c.w / r3) * nb(1u, 3u);
		sum += ldrow(1u, ar, c.x) * ld(2u, at(2u, uvec4(c.y, k, c.z, c.w)));
	}
	return sum;
}

float getrowsback(uvec4 c) {
	float sum = 0.0;
	for (uint i = 0u; i < ne(2u, 0u); i++) {
		int id = int(word(2u, toff(2u) + i * nb(2u, 0u)));
		if (id < 0 || uint(id) >= ne(0u, 1u)) {
			atomicOr(status[0], 1u);
			status[1] = uint(id);
		} else if (uint(id) == c.y) {
			sum += ld(1u, at(1u, uvec4(c.x, i, 0u, 0u)));
		}
	}
	return sum;
}

float conv2ddw(uvec4 c) {
	int s0 = opi(0u), s1 = opi(1u), p0 = opi(2u), p1 = opi(3u), d0 = opi(4u), d1 = opi(5u);
	float sum = 0.0;
	for (uint ky = 0u; ky < ne(1u, 1u); ky++) {
		int iy = int(c.y) * s1 + int(ky) * d1 - p1;
		if (iy < 0 || iy >= int(ne(2u, 1u))) continue;
		for (uint kx = 0u; kx < ne(1u, 0u); kx++) {
			int ix = int(c.x) * s0 + int(kx) * d0 - p0;
			if (ix < 0 || ix >= int(ne(2u, 0u))) continue;
			sum += ld(1u, at(1u, uvec4(kx, ky, 0u, c.z))) * ld(2u, at(2u, uvec4(uint(ix), uint(iy), c.z, c.w)));
		}
	}
	return sum;
}

float convt2d(uvec4 c) {
	uint st = uint(opi(0u)), kw = ne(1u, 0u), kh = ne(1u, 1u), cin = ne(1u, 3u);
	bool round16 = ty(1u) == T_F16;
	uint ylo = c.y + 1u > kh ? (c.y + 1u - kh + st - 1u) / st : 0u, yhi = min(c.y / st + 1u, ne(2u, 1u));
	uint xlo = c.x + 1u > kw ? (c.x + 1u - kw + st - 1u) / st : 0u, xhi = min(c.x / st + 1u, ne(2u, 0u));
	float acc = 0.0;
	for (uint iy = ylo; iy < yhi; iy++) {
		uint ky = c.y - iy * st;
		for (uint ix = xlo; ix < xhi; ix++) {
			uint kx = c.x - ix * st;
			float d = 0.0;
			for (uint ch = 0u; ch < cin; ch++) {
				float x = ld(2u, at(2u, uvec4(ix, iy, ch, c.w)));
				if (round16) x = f16round(x);
				d += x * ld(1u, at(1u, uvec4(kx, ky, c.z, ch)));
			}
			acc += d;
		}
	}
	return acc;
}

float conv2d(uvec4 c) {
	int s0 = opi(0u), s1 = opi(1u), p0 = opi(2u), p1 = opi(3u), d0 = opi(4u), d1 = opi(5u);
	bool round16 = ty(1u) == T_F16;
	float sum = 0.0;
	for (uint ch = 0u; ch < ne(1u, 2u); ch++) {
		for (uint ky = 0u; ky < ne(1u, 1u); ky++) {
			int iy = int(c.y) * s1 + int(ky) * d1 - p1;
			if (iy < 0 || iy >= int(ne(2u, 1u))) continue;
			for (uint kx = 0u; kx < ne(1u, 0u); kx++) {
				int ix = int(c.x) * s0 + int(kx) * d0 - p0;
				if (ix < 0 || ix >= int(ne(2u, 0u))) continue;
				float x = ld(2u, at(2u, uvec4(uint(ix), uint(iy), ch, c.w)));
				if (round16) x = f16round(x);
				sum += ld(1u, at(1u, uvec4(kx, ky, ch, c.z))) * x;
			}
		}
	}
	return sum;
}

// conv3d: CONV_3D, result (ox, oy, oz, n·OC + oc) = Σ over input channel
// c, kernel depth, row and column (ggml's patch order) of kernel (kx, ky,
// kz, oc·C + c) times input (ox·s0 + kx·d0 - p0, …, n·C + c), taps outside
// the input left out (they add 0), the input rounded to f16 for an f16
// kernel. s, p, d are op[0..8], C op[9] and OC op[11].
float conv3d(uvec4 c) {
	uint ic = uint(opi(9u)), oc = uint(opi(11u));
	uint o = c.w % oc, n = c.w / oc;
	bool round16 = ty(1u) == T_F16;
	float sum = 0.0;
	for (uint ch = 0u; ch < ic; ch++) {
		for (uint kz = 0u; kz < ne(1u, 2u); kz++) {
			int iz = int(c.z) * opi(2u) + int(kz) * opi(8u) - opi(5u);
			if (iz < 0 || iz >= int(ne(2u, 2u))) continue;
			for (uint ky = 0u; ky < ne(1u, 1u); ky++) {
				int iy = int(c.y) * opi(1u) + int(ky) * opi(7u) - opi(4u);
				if (iy < 0 || iy >= int(ne(2u, 1u))) continue;
				for (uint kx = 0u; kx < ne(1u, 0u); kx++) {
					int ix = int(c.x) * opi(0u) + int(kx) * opi(6u) - opi(3u);
					if (ix < 0 || ix >= int(ne(2u, 0u))) continue;
					float x = ld(2u, at(2u, uvec4(uint(ix), uint(iy), uint(iz), n * ic + ch)));
					if (round16) x = f16round(x);
					sum += ld(1u, at(1u, uvec4(kx, ky, kz, o * ic + ch))) * x;
				}
			}
		}
	}
	return sum;
}

float im2col3d(uvec4 c) {
	uint kw = ex(1u), kh = ex(2u), kd = ex(3u), od = ex(4u);
	uint x = c.x % kw, y = (c.x / kw) % kh, z = (c.x / (kw * kh)) % kd, ch = c.x / (kw * kh * kd);
	uint d = c.w % od, n = c.w / od;
	int ix = int(c.y) * opi(0u) + int(x) * opi(6u) - opi(3u);
	int iy = int(c.z) * opi(1u) + int(y) * opi(7u) - opi(4u);
	int iz = int(d) * opi(2u) + int(z) * opi(8u) - opi(5u);
	if (ix < 0 || iy < 0 || iz < 0 || ix >= int(ne(1u, 0u)) || iy >= int(ne(1u, 1u)) || iz >= int(ne(1u, 2u))) return 0.0;
	return ld(1u, at(1u, uvec4(uint(ix), uint(iy), uint(iz), n * uint(opi(9u)) + ch)));
}

float col2im1d(uvec4 c) {
	uint st = uint(opi(0u)), kk = ne(1u, 0u) / uint(opi(1u));
	uint a = c.x + uint(opi(2u));
	uint lo = a + 1u > kk ? (a + 1u - kk + st - 1u) / st : 0u, hi = min(a / st + 1u, ne(1u, 1u));
	float sum = 0.0;
	for (uint i = lo; i < hi; i++) sum += ld(1u, at(1u, uvec4(c.y * kk + a - i * st, i, 0u, 0u)));
	return sum;
}

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	uint mode = ex(0u);
	float v;
	if (mode == M_UPSCALE) v = upscale(c);
	else if (mode == M_POOL1D) v = pool1d(c);
	else if (mode == M_POOL2D) v = pool2d(c);
	else if (mode == M_CONVT1D) v = convt1d(c);
	else if (mode == M_SSM_CONV) v = ssmconv(c);
	else if (mode == M_TIMESTEP) v = timestep(c);
	else if (mode == M_OUT_PROD) v = outprod(c);
	else if (mode == M_GET_ROWS_BACK) v = getrowsback(c);
	else if (mode == M_CONV2D_DW) v = conv2ddw(c);
	else if (mode == M_CONVT2D) v = convt2d(c);
	else if (mode == M_COL2IM1D) v = col2im1d(c);
	else if (mode == M_CONV2D) v = conv2d(c);
	else if (mode == M_CONV3D) v = conv3d(c);
	else v = im2col3d(c);
	st(at(0u, c), v);
}
