#!/bin/sh
# gogml OpenGL device check on an NVIDIA GPU (EGL, headless). Needs no Go:
# build.sh built the binaries.
#
#     gl-gpu-check-out/run.sh [results-dir]   # default: $OUT, else ./gl-gpu-check-results
#
# EGL setup: NVIDIA's glvnd vendor file is forced when one exists
# (__EGL_VENDOR_LIBRARY_FILENAMES; first of NVIDIA_EGL_VENDOR_FILES), the
# folder of libEGL_nvidia.so.0 goes on the library path, and glvnd's
# libEGL/libGLdispatch come from this folder when the machine lacks them.
# The check FAILS unless the GL renderer string names NVIDIA: a Mesa
# fallback (llvmpipe) must not pass. It then stops early, unless
# GL_CHECK_FORCE=1 (run everything anyway, to exercise the stages).
#
# Stages, each under a time limit, files written as they run:
#   device.txt   TestDeviceInfo: renderer, GL version, limits (20 s)
#   tests.txt    every OpenGL test, GOGML_REQUIRE_GL=1 (60 s)
#   bench.txt    transfers and ops vs the CPU, -test.benchtime $BENCHTIME
#                (default 5x: a bounded count, not a duration) (25 s)
#   decoder.txt  `gogml run` on the CPU and on GL0: ids equal, logits
#                checksums within DECODER_TOL (1e-3), tokens/s (25 s)
#   summary.txt  FIRST LINE "PASS: ..." or "FAIL: <why>"; rewritten after
#                every stage ("FAIL: stopped during ..." if killed)
# Time: BUDGET seconds (default 130) or until DEADLINE (epoch seconds, set
# by scripts/device-check.sh), whichever comes first.
# Exit status: 0 on PASS, 1 on FAIL.
set -u
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-${OUT:-$PWD/gl-gpu-check-results}}
mkdir -p "$R" || exit 1
R=$(cd "$R" && pwd)
START=$(date +%s)
BUDGET=${BUDGET:-130}
DEADLINE=${DEADLINE:-$((START + BUDGET))}
BENCHTIME=${BENCHTIME:-5x}
DECODER_TOL=${DECODER_TOL:-1e-3}
NVIDIA_EGL_VENDOR_FILES=${NVIDIA_EGL_VENDOR_FILES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json}
cd "$here" || exit 1
chmod +x ./opengl.test ./gogml 2>/dev/null

# lim N: the seconds a step may run: N or what is left before DEADLINE
# less 3 s; 0 when under 5 s are left.
lim() {
	left=$((DEADLINE - $(date +%s) - 3))
	[ "$left" -gt "$1" ] && left=$1
	[ "$left" -lt 5 ] && left=0
	echo "$left"
}
: > "$R/stages.txt"
fails=""
first=""
stage() {
	printf '%-8s %-4s %s\n' "$1" "$2" "$3" >> "$R/stages.txt"
	if [ "$2" = FAIL ]; then
		fails="$fails${fails:+, }$1"
		[ -n "$first" ] || first="$1: $(echo "$3" | cut -c1-240)"
	fi
	return 0
}
summary() {
	{
		echo "$1"
		echo "gogml OpenGL device check, $(cat VERSION 2>/dev/null || echo 'unknown commit'), $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(($(date +%s) - START)) s"
		cat "$R/stages.txt"
	} > "$R/summary.txt.tmp"
	mv "$R/summary.txt.tmp" "$R/summary.txt"
}
running() { summary "FAIL: stopped during the $1 stage (killed or out of time; files so far are in $R)"; }
trap 'stage signal FAIL "terminated"; summary "FAIL: terminated by a signal (failed so far: ${fails})"; exit 1' TERM INT HUP

# EGL: force NVIDIA's vendor file, find libEGL_nvidia, fall back to the
# bundled glvnd libraries.
running device
vendor=${__EGL_VENDOR_LIBRARY_FILENAMES:-}
if [ -z "$vendor" ]; then
	for f in $NVIDIA_EGL_VENDOR_FILES; do
		if [ -f "$f" ]; then
			vendor=$f
			break
		fi
	done
fi
[ -n "$vendor" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$vendor"
nvlib=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
	if [ -e "$d/libEGL_nvidia.so.0" ]; then
		nvlib=$d
		break
	fi
done
[ -n "$nvlib" ] && LD_LIBRARY_PATH="$nvlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ldconfig -p 2>/dev/null | grep -q 'libEGL\.so\.1 ' && ! { [ -n "$nvlib" ] && [ -e "$nvlib/libEGL.so.1" ]; }; then
	LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$here"
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
export GOGML_REQUIRE_GL=1
{
	date -u
	echo "commit: $(cat VERSION 2>/dev/null)"
	echo "__EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-(unset: glvnd picks)}"
	[ -n "$vendor" ] && cat "$vendor"
	echo "libEGL_nvidia.so.0: ${nvlib:-not found}"
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	ls -l /usr/share/glvnd/egl_vendor.d /usr/local/nvidia/share/glvnd/egl_vendor.d /etc/glvnd/egl_vendor.d 2>&1
	timeout -k 2 10 nvidia-smi -L 2>&1 || echo "nvidia-smi not available"
} > "$R/env.txt" 2>&1

t=$(lim 20)
renderer=""
if [ "$t" = 0 ]; then
	stage device FAIL "no time left"
else
	timeout -k 2 "$t" ./opengl.test -test.run '^TestDeviceInfo$' -test.v -test.count=1 -test.timeout "$((t - 2))s" > "$R/device.txt" 2>&1
	rc=$?
	renderer=$(sed -n 's/.*device_test\.go:[0-9]*: device: //p' "$R/device.txt" | head -1)
	egl="vendor file ${vendor:-none found}, libEGL_nvidia ${nvlib:-not found}"
	if [ "$rc" != 0 ] || [ -z "$renderer" ]; then
		why=$(grep -m1 -E '_test\.go:[0-9]+: |^panic:|test timed out' "$R/device.txt" | sed 's/^ *[a-z_]*\.go:[0-9]*: //' | cut -c1-240)
		[ "$rc" = 124 ] && why="timed out after ${t}s"
		stage device FAIL "rc=$rc, no GL context ($egl): ${why:-see device.txt}"
	elif echo "$renderer" | cut -d'(' -f1 | grep -qi nvidia; then
		stage device OK "$renderer"
	else
		stage device FAIL "the GL renderer does not name NVIDIA: $renderer ($egl)"
	fi
fi
if [ -n "$fails" ] && [ "${GL_CHECK_FORCE:-0}" != 1 ]; then
	summary "FAIL: $first (stopped early; later stages not run)"
	echo "gl-gpu-check: $(head -1 "$R/summary.txt")"
	exit 1
fi

running tests
t=$(lim 60)
if [ "$t" = 0 ]; then
	stage tests FAIL "no time left"
else
	timeout -k 3 "$t" ./opengl.test -test.v -test.count=1 -test.timeout "$((t - 3))s" > "$R/tests.txt" 2>&1
	rc=$?
	counts="$(grep -c -- '--- PASS' "$R/tests.txt") passed, $(grep -c -- '--- FAIL' "$R/tests.txt") failed, $(grep -c -- '--- SKIP' "$R/tests.txt") skipped"
	if [ "$rc" = 0 ]; then
		stage tests OK "$counts"
	else
		[ "$rc" = 124 ] && counts="timed out after ${t}s; $counts"
		stage tests FAIL "rc=$rc ($counts; first: $(grep -m1 -E -- '--- FAIL|panic:|test timed out' "$R/tests.txt" | sed 's/^ *//'))"
		grep -E -- '^(    )?--- FAIL|^panic|test timed out' "$R/tests.txt" | head -20 | sed 's/^/  /' >> "$R/stages.txt"
	fi
fi

running bench
t=$(lim 25)
if [ "$t" = 0 ]; then
	stage bench FAIL "no time left"
else
	timeout -k 3 "$t" ./opengl.test -test.run '^$' -test.bench . -test.benchtime "$BENCHTIME" -test.timeout "$((t - 2))s" > "$R/bench.txt" 2>&1
	rc=$?
	nb=$(grep -c '^Benchmark' "$R/bench.txt")
	if [ "$rc" = 0 ]; then
		stage bench OK "$nb results"
	else
		[ "$rc" = 124 ] && rc="124 (timed out after ${t}s)"
		stage bench FAIL "rc=$rc, $nb results"
	fi
	grep '^Benchmark' "$R/bench.txt" | sed 's/^/  /' >> "$R/stages.txt"
fi

running decoder
for be in cpu opengl; do
	t=$(lim 12)
	f="$R/decoder-$be.txt"
	if [ "$t" = 0 ]; then
		echo "no time left" > "$f"
		continue
	fi
	timeout -k 2 "$t" ./gogml run -q -per-token=false -backend "$be" -n 32 > "$f" 2>&1
	echo "rc=$?" >> "$f"
done
awk -v name=small -v tol="$DECODER_TOL" -v a=cpu -v b=opengl -f decoder-compare.awk "$R/decoder-cpu.txt" "$R/decoder-opengl.txt" > "$R/decoder.txt"
if grep -q '^OK' "$R/decoder.txt"; then
	stage decoder OK "$(cut -c6- "$R/decoder.txt")"
else
	stage decoder FAIL "$(cut -c6- "$R/decoder.txt")"
fi

if [ -z "$fails" ]; then
	summary "PASS: OpenGL on NVIDIA ($renderer): tests, bench and decoder (CPU = GL0) passed"
	rc=0
else
	summary "FAIL: $fails failed; first: $first"
	rc=1
fi
trap - TERM INT HUP
echo "gl-gpu-check: $(head -1 "$R/summary.txt")"
echo "gl-gpu-check: results in $R"
exit $rc
