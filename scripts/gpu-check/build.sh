#!/bin/sh
# Builds the NVIDIA device check into one folder (default gpu-check-out):
# the CUDA package's test binary (tests and benchmarks), the gogml command
# (for `gogml membench`) and run.sh. Go is needed here only; the GPU
# machine needs just an NVIDIA driver. Binaries are CGO_ENABLED=0: purego
# loads libcuda.so.1 at run time.
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-gpu-check-out}
GO=${GO:-go}
mkdir -p "$OUT"
export CGO_ENABLED=0 GOOS=linux GOARCH=${GOARCH:-amd64}
$GO test -c -o "$OUT/cuda.test" ./backends/cuda
if $GO build -o "$OUT/gogml" ./cmd/gogml 2>"$OUT/gogml-build.log"; then
	rm -f "$OUT/gogml-build.log"
else
	echo "gpu-check: gogml did not build (see $OUT/gogml-build.log); membench will be skipped" >&2
	rm -f "$OUT/gogml"
fi
cp scripts/gpu-check/run.sh "$OUT/run.sh"
chmod +x "$OUT/run.sh"
git rev-parse HEAD > "$OUT/VERSION" 2>/dev/null || true
du -sh "$OUT"
echo "gpu-check: built $OUT; on an NVIDIA machine run: $OUT/run.sh [results-dir]"
