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
	# Drop the build-id comment line (it names the nvcc build). Even so,
	# nvcc 11.8 is not fully deterministic: k_concat_f32 in elementwise.ptx
	# comes out in one of two equivalent instruction orders (3 of 11 runs
	# of this script's nvcc line gave the committed one, compared with
	# md5sum), so commit regenerated PTX only together with a .cu change.
	grep -v '^// Compiler Build ID' "$out.tmp" > "$out"
	rm -f "$out.tmp"
	echo "ptx: $src -> $out"
done
