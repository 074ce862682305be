#!/usr/bin/env bash
# Writes docs/multi-device.md: gogml's decoder on one device, spread over
# OpenGL (llvmpipe here) + CPU, and over two of ggml 0.27.0's own
# rpc-server processes + CPU on loopback, in one run: tokens/s and the
# bytes that cross between devices per token. Usage: scripts/devices-table.sh [OUT.md]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/multi-device.md}
GO=${GO:-go}
args=(-dim 256 -ffn 688 -heads 8 -layers 8 -ctx 256 -n 64 -prompt 1,2,3,4,5,6,7,8 -q)
tmp=$(mktemp -d)
bin=$tmp/gogml gen=$tmp/generated
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
$GO build -tags opengl,egl -o "$bin" ./cmd/gogml
bash scripts/ggml-peer.sh fetch >/dev/null
p1=$((40000 + RANDOM % 10000)); p2=$((p1 + 1))
bash scripts/ggml-peer.sh run ggml-rpc-server -p "$p1" >/dev/null 2>&1 &
bash scripts/ggml-peer.sh run ggml-rpc-server -p "$p2" >/dev/null 2>&1 &
for p in $p1 $p2; do
	for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.1; done
done
run() { # label, devices
	local o
	o=$("$bin" run -devices "$2" "${args[@]}")
	local tps bytes sum
	tps=$(sed -n 's/^per token: \([0-9.]*\) tokens\/s.*/\1/p' <<<"$o")
	bytes=$(sed -n 's/.*; \(.*\) crossed between devices/\1/p' <<<"$o")
	sum=$(sed -n 's/^logits checksum: //p' <<<"$o")
	sed -n 's/^generated: //p' <<<"$o" >>"$gen"
	echo "| $1 | \`$2\` | $tps | ${bytes:-0 B} | $sum |"
}
{
	echo "# The decoder over several devices"
	echo
	echo "Written by \`scripts/devices-table.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)); do not edit by hand."
	echo "Model: \`gogml run ${args[*]}\` (f32, 8 layers split evenly over the devices; the CPU listed last holds the inputs)."
	echo "ggml's servers: $(bash scripts/ggml-peer.sh version) \`ggml-rpc-server\` on loopback. OpenGL: Mesa llvmpipe (a CPU rasterizer: it shares these cores)."
	echo
	echo "| setup | devices | tokens/s (generation) | bytes crossing devices per token | logits checksum |"
	echo "|---|---|---|---|---|"
	run "one device" cpu
	run "OpenGL + CPU" opengl,cpu
	run "2 ggml RPC servers + CPU" "rpc://127.0.0.1:$p1,rpc://127.0.0.1:$p2,cpu"
	echo
	if [ "$(sort -u "$gen" | wc -l)" = 1 ]; then
		echo "All three generated the same tokens ($(head -1 "$gen" | cut -c1-40)…); the checksums differ in the last digits where ggml's or llvmpipe's kernels add in another order."
	else
		echo "**The setups generated different tokens:**"; sed 's/^/    /' "$gen"
	fi
} > "$out"
cat "$out"
