#!/bin/sh
# Regenerates the committed PTX from the CUDA C sources in this folder.
# Needs nvcc (Debian 12: enable the non-free component, then
# `apt-get install nvidia-cuda-toolkit`, CUDA 11.8). Target: compute_70,
# PTX ISA 7.x, loadable by drivers from CUDA 11.8 (late 2022) on.
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
ARCH=${CUDA_ARCH:-compute_70}
for src in *.cu; do
	out="${src%.cu}.ptx"
	"$NVCC" -ptx -arch="$ARCH" -O3 -std=c++14 -o "$out.tmp" "$src"
	# Drop the build-id comment lines so regenerating with the same nvcc
	# gives identical files.
	grep -v '^// Compiler Build ID' "$out.tmp" > "$out"
	rm -f "$out.tmp"
	echo "ptx: $src -> $out"
done
