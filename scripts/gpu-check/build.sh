#!/bin/sh
# Builds the NVIDIA device check into one folder (default gpu-check-out):
# the CUDA package's test binary (tests, TestPreflight, benchmarks), the
# gogml command (`gogml run`, `gogml membench`, `gogml rpc-server` where
# the tree has it), rpcping (an RPC protocol round trip), run.sh,
# decoder-compare.awk and VERSION. Go is needed here only; the GPU machine
# needs just an NVIDIA driver. Binaries are CGO_ENABLED=0 (purego loads
# libcuda.so.1 at run time) and stripped (-s -w; tracebacks keep function
# names).
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-gpu-check-out}
GO=${GO:-go}
mkdir -p "$OUT"
export CGO_ENABLED=0 GOOS=linux GOARCH=${GOARCH:-amd64}
$GO test -c -ldflags='-s -w' -o "$OUT/cuda.test" ./backends/cuda
$GO build -ldflags='-s -w' -o "$OUT/gogml" ./cmd/gogml
$GO build -ldflags='-s -w' -o "$OUT/rpcping" ./scripts/gpu-check/rpcping
cp scripts/gpu-check/run.sh scripts/gpu-check/decoder-compare.awk "$OUT/"
chmod +x "$OUT/run.sh"
git describe --always --dirty --abbrev=12 > "$OUT/VERSION" 2>/dev/null || true
echo "gpu-check: built $OUT ($(du -sh "$OUT" | cut -f1)); on an NVIDIA machine run: $OUT/run.sh [results-dir]"
