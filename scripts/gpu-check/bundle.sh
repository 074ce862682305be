#!/bin/sh
# bundle.sh [OUTDIR]: build the whole device check (make device-check) into
# OUTDIR (default device-check-out): cuda/ (scripts/gpu-check/build.sh),
# gl/ (scripts/gl-gpu-check/build.sh; needs cgo and libegl-dev, which
# scripts/ensure-gl-deps.sh installs as root), device-check.sh and the
# README. A session's device `run` carries OUTDIR (its limit is 64 MiB in
# all; this fails above 60 MiB). See scripts/gpu-check/README.
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-device-check-out}
GO=${GO:-go}
rm -rf "$OUT"
mkdir -p "$OUT"
GO=$GO sh scripts/gpu-check/build.sh "$OUT/cuda"
if ! GO=$GO sh scripts/gl-gpu-check/build.sh "$OUT/gl"; then
	echo "bundle: the OpenGL part did not build; device-check.sh will report it missing" >&2
	rm -rf "$OUT/gl"
fi
cp scripts/device-check.sh scripts/gpu-check/README "$OUT/"
chmod +x "$OUT/device-check.sh"
kib=$(du -sk "$OUT" | cut -f1)
echo "bundle: $OUT is $((kib / 1024)) MiB"
if [ "$kib" -gt $((60 * 1024)) ]; then
	echo "bundle: $OUT is over 60 MiB: too big to carry" >&2
	exit 1
fi
