#!/bin/sh
# build.sh OUTDIR: build the OpenGL device check here (Go, cgo, libegl-dev)
# for a machine with an NVIDIA (or other EGL) driver but no Go toolchain.
#
# OUTDIR gets: opengl.test (conformance, split, ops tests and benchmarks),
# gogml (the CLI, for "run -backend opengl"), the vendor-neutral GL
# libraries libEGL.so.1 and libGLdispatch.so.0 (glvnd) from this machine,
# run.sh, decoder-compare.awk and VERSION. The driver's own EGL library
# (libEGL_nvidia.so.0) and its glvnd vendor file must be on the target
# machine. Binaries are stripped (-s -w; tracebacks keep function names).
set -eu
out=${1:-gl-gpu-check-out}
GO=${GO:-go}
tags=opengl,egl
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sh "$root/scripts/ensure-gl-deps.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$root" && "$GO" test -c -ldflags=-s\ -w -tags "$tags" -o "$out/opengl.test" ./backends/opengl)
(cd "$root" && "$GO" build -ldflags=-s\ -w -tags "$tags" -o "$out/gogml" ./cmd/gogml)
for lib in libEGL.so.1 libGLdispatch.so.0; do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
	[ -n "$path" ] || { echo "build.sh: $lib not found (install libegl1)" >&2; exit 1; }
	cp -L "$path" "$out/$lib"
done
cp "$here/run.sh" "$root/scripts/gpu-check/decoder-compare.awk" "$out/"
chmod +x "$out/run.sh"
(cd "$root" && git describe --always --dirty --abbrev=12) > "$out/VERSION" 2>/dev/null || true
echo "built $out ($(du -sh "$out" | cut -f1)): on the GPU machine run $out/run.sh [results-dir]"
