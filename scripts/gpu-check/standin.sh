#!/bin/sh
# standin.sh DIR: build the Go tests' stand-in libcuda
# (backends/cuda/testdata/fakecuda.c: records calls, keeps no data, device
# reads return zeros) as DIR/libcuda.so.1, to try the device check's
# scripts without a GPU:
#
#     sh scripts/gpu-check/standin.sh /tmp/standin
#     GPU_CHECK_LIBCUDA_DIR=/tmp/standin sh scripts/device-check.sh /tmp/res
#
# The preflight then fails (the copy back returns zeros) and the check
# stops there; GPU_CHECK_FORCE=1 runs every stage anyway, which fail
# clearly. FAKECUDA_HANG=1 makes stream synchronisation hang, to try the
# time limits.
set -eu
dir=${1:?usage: standin.sh DIR}
mkdir -p "$dir"
cc -shared -fPIC -O1 -o "$dir/libcuda.so.1" "$(dirname "$0")/../../backends/cuda/testdata/fakecuda.c"
echo "stand-in libcuda: $dir/libcuda.so.1"
