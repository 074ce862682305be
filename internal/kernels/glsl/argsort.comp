// argsort: ARGSORT and TOP_K, one invocation per source element. Its
// rank in a stable sort of its row (ascending for ARGSORT with op[0] = 0,
// descending otherwise; ties keep index order) is the number of the row's
// elements that come before it; an element whose rank is below the result
// row's length writes its index there, and stops counting once its rank
// reaches that length. ex(0) = 1 for TOP_K, which swaps the first two
// places as ggml's kernel does.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

void main() {
	uint i = gid();
	if (i >= nel(1u)) return;
	uvec4 c = coords(1u, i);
	uint n = ne(1u, 0u);
	uint ro = at(1u, uvec4(0u, c.yzw));
	bool desc = ex(0u) == 1u || opi(0u) == 1;
	float x = ld(1u, ro + c.x * nb(1u, 0u));
	// Only ranks below k are written, so the count stops when it reaches
	// k: for TOP_K (k small) most elements stop after about k·n/rank
	// steps instead of n, which turns n² into about k·n·ln(n/k).
	uint k = ne(0u, 0u);
	uint rank = 0u;
	for (uint j = 0u; j < n; j++) {
		float y = ld(1u, ro + j * nb(1u, 0u));
		bool before = desc ? y > x : y < x;
		if (before || (y == x && j < c.x)) {
			rank++;
			if (rank >= k) return;
		}
	}
	if (ex(0u) == 1u && k > 1u && rank < 2u) rank = 1u - rank;
	stw(at(0u, uvec4(rank, c.yzw)), c.x);
}
