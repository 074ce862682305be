#!/bin/sh
# gogml CUDA device check. Run on a machine with an NVIDIA GPU and driver
# (no Go needed), from anywhere:
#
#     gpu-check-out/run.sh [results-dir]      # default: $OUT, else ./gpu-check-results
#
# Steps, each under a time limit, all output kept in the results folder:
#   env.txt          nvidia-smi, driver and binary versions
#   tests.txt        every CUDA test with GOGML_REQUIRE_CUDA=1: buffer
#                    conformance on CUDA0, CUDA_Host and a 1 MiB-max CUDA0,
#                    the split-into-several-buffers test, OOM recovery,
#                    concurrent callers, 65 op cases vs the CPU backend on
#                    CUDA0 and CUDA_Host, PTX parameter checks
#   bench.txt        element-wise GB/s (and % of peak: 4800 GB/s on H200,
#                    GOGML_PEAK_GBS overrides), MulMat TFLOP/s, host<->device
#                    GB/s pageable vs pinned, alloc+free latency, launch cost
#   membench.*       `gogml membench` table, JSON and plot, when it exists
#   summary.txt      pass/fail per step and every benchmark line
# Sized for a few minutes on an H200. BENCHTIME (default 20x) and
# MEMBENCH_MAX (default 256M) shrink or grow it. Each step has a hard time
# limit (tests 180 s, benchmarks 210 s, membench 90 s: at most 8 min in
# all, inside one 10-minute device call); a Go test binary stopped by its
# own -test.timeout, 10 s earlier, prints the goroutines of the hang.
# Exit status: 0 when the tests and benchmarks pass, 1 otherwise. At most
# 7 result files, all at the top of the results folder.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
R=${1:-${OUT:-$PWD/gpu-check-results}}
mkdir -p "$R"
R=$(cd "$R" && pwd)
BENCHTIME=${BENCHTIME:-20x}
MEMBENCH_MAX=${MEMBENCH_MAX:-256M}
cd "$HERE"
# Copies (carried folders, unpacked archives) may lose the execute bit.
chmod +x ./cuda.test 2>/dev/null
[ -f ./gogml ] && chmod +x ./gogml 2>/dev/null
fail=0
# The driver library may sit outside the loader's search path (container
# mounts); add the usual folders that hold it.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib; do
		[ -e "$d/libcuda.so.1" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	done
	export LD_LIBRARY_PATH
fi

status() { echo "$1: $2" | tee -a "$R/summary.txt"; }
: > "$R/summary.txt"

{
	date -u
	uname -a
	cat VERSION 2>/dev/null
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	ldconfig -p 2>/dev/null | grep libcuda || echo "libcuda not in the loader cache"
	nvidia-smi 2>&1 || echo "nvidia-smi not available"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv 2>&1 || true
} > "$R/env.txt" 2>&1

# 1. Tests (conformance, split, ops). GOGML_REQUIRE_CUDA=1 turns a missing
# device into failures instead of skips.
GOGML_REQUIRE_CUDA=1 timeout -k 5 180 ./cuda.test -test.v -test.count=1 -test.short -test.timeout 170s > "$R/tests.txt" 2>&1
rc=$?
[ "$rc" = 0 ] || fail=1
status tests "rc=$rc ($(grep -c -- '--- PASS' "$R/tests.txt") passed, $(grep -c -- '--- FAIL' "$R/tests.txt") failed, $(grep -c -- '--- SKIP' "$R/tests.txt") skipped)"
grep -E -- '--- FAIL|^FAIL|panic' "$R/tests.txt" | head -40 >> "$R/summary.txt"

# 2. Benchmarks.
GOGML_REQUIRE_CUDA=1 timeout -k 5 210 ./cuda.test -test.run '^$' -test.bench . -test.benchtime "$BENCHTIME" -test.timeout 200s > "$R/bench.txt" 2>&1
rc=$?
[ "$rc" = 0 ] || fail=1
status bench "rc=$rc"
grep -E '^Benchmark' "$R/bench.txt" >> "$R/summary.txt"

# 3. gogml membench, if the command has it (CPU types always, CUDA types
# when its provider is registered).
if [ -x ./gogml ] && ./gogml membench -h > /dev/null 2>&1; then
	timeout -k 5 90 ./gogml membench -max "$MEMBENCH_MAX" -q -json "$R/membench.json" -plot "$R/membench.svg" > "$R/membench.txt" 2>&1
	status membench "rc=$?"
	cat "$R/membench.txt" >> "$R/summary.txt"
else
	status membench "skipped (no gogml membench in this build)"
fi
echo "results in $R"
exit $fail
