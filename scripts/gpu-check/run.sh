#!/bin/sh
# gogml CUDA device check. Run on a machine with an NVIDIA GPU and driver
# (no Go needed), from anywhere:
#
#     gpu-check-out/run.sh [results-dir]      # default: $OUT, else ./gpu-check-results
#
# Stages, in order, each under a time limit; every file is written as its
# stage runs, so a stage killed by its limit (or the whole script killed)
# keeps what it had measured:
#   preflight.txt   nvidia-smi, then TestPreflight: open CUDA0 (every PTX
#                   module JIT-compiled, info logs printed), one copy each
#                   way and one kernel launch, checked. When it fails the
#                   script stops here and says why (60 s at most).
#   tests.txt       every CUDA test with GOGML_REQUIRE_CUDA=1 (conformance
#                   on CUDA0, CUDA_Host and a 1 MiB-max CUDA0, split
#                   buffers, OOM recovery, concurrent callers, the op cases
#                   against the CPU backend)
#   decoder.txt     `gogml run` on the CPU and on CUDA0 for three model
#                   configurations and a q4_K write-demo GGUF file
#                   (-model): generated ids, logits checksums and
#                   tokens/s side by side; ids must be equal and the
#                   checksums within a relative DECODER_TOL (1e-3)
#   bench.txt       Go benchmarks: transfers (pageable vs pinned), alloc,
#                   launch cost, then element-wise GB/s and MulMat TFLOP/s
#   membench.txt    `gogml membench -types CUDA0,CUDA_Host` (plus the host
#                   copy reference), one process per size, 64M first (near
#                   peak and quick), then 256M and downwards;
#                   membench-<size>.json per size
#   summary.txt     FIRST LINE: "PASS: ..." or "FAIL: <why>", then one line
#                   per stage and the key figures. Rewritten after every
#                   stage (a killed run leaves "FAIL: stopped during ...").
#
# Time: at most BUDGET seconds (default 315) from the start, or until
# DEADLINE (epoch seconds; scripts/device-check.sh sets it); a stage gets
# the smaller of its own limit and what is left. Stage limits: preflight
# 55, tests 80, decoder 50, bench 70, membench 60.
#
# Environment:
#   GPU_CHECK_LIBCUDA_DIR  a folder holding a libcuda.so.1 to use instead of
#                          the driver's (the stand-in of the Go tests)
#   GPU_CHECK_FORCE=1      go on after a failed preflight (to exercise the
#                          later stages against a stand-in)
#   BENCHTIME (10x), MEMBENCH_SIZES ("64M 256M 16M 4M 1M 256K 64K 16K 4K"),
#   DECODER_TOL (1e-3)
# Exit status: 0 on PASS, 1 on FAIL.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
R=${1:-${OUT:-$PWD/gpu-check-results}}
mkdir -p "$R" || exit 1
R=$(cd "$R" && pwd)
START=$(date +%s)
BUDGET=${BUDGET:-315}
DEADLINE=${DEADLINE:-$((START + BUDGET))}
BENCHTIME=${BENCHTIME:-10x}
MEMBENCH_SIZES=${MEMBENCH_SIZES:-64M 256M 16M 4M 1M 256K 64K 16K 4K}
DECODER_TOL=${DECODER_TOL:-1e-3}
cd "$HERE" || exit 1
# Copies (carried folders, unpacked archives) may lose the execute bit.
chmod +x ./cuda.test ./gogml ./rpcping 2>/dev/null

# lim N [END]: the seconds a step may run: N, or what is left before END
# (epoch seconds: the stage's own end) or DEADLINE less 3 s for the
# summary, whichever is least; 0 when under 5 s are left.
lim() {
	now=$(date +%s)
	left=$((DEADLINE - now - 3))
	[ "$left" -gt "$1" ] && left=$1
	[ -n "${2:-}" ] && [ "$left" -gt $(($2 - now)) ] && left=$(($2 - now))
	[ "$left" -lt 5 ] && left=0
	echo "$left"
}

# The driver library may sit outside the loader's search path (container
# mounts); add the folders that usually hold it. A stand-in comes first.
if [ -n "${GPU_CHECK_LIBCUDA_DIR:-}" ]; then
	LD_LIBRARY_PATH="$GPU_CHECK_LIBCUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
elif ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib; do
		[ -e "$d/libcuda.so.1" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	done
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
export GOGML_REQUIRE_CUDA=1

: > "$R/stages.txt"
fails=""
first=""
# stage NAME OK|FAIL|SKIP TEXT: record a stage's outcome.
stage() {
	printf '%-9s %-4s %s\n' "$1" "$2" "$3" >> "$R/stages.txt"
	if [ "$2" = FAIL ]; then
		fails="$fails${fails:+, }$1"
		[ -n "$first" ] || first="$1: $(echo "$3" | cut -c1-240)"
	fi
	return 0
}
# summary VERDICT: rewrite summary.txt, its first line the verdict.
summary() {
	{
		echo "$1"
		echo "gogml CUDA device check, $(cat VERSION 2>/dev/null || echo 'unknown commit'), $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(($(date +%s) - START)) s"
		cat "$R/stages.txt"
		cat "$R/key.txt"
	} > "$R/summary.txt.tmp"
	mv "$R/summary.txt.tmp" "$R/summary.txt"
}
running() { summary "FAIL: stopped during the $1 stage (killed or out of time; files so far are in $R)"; }
trap 'stage signal FAIL "terminated"; summary "FAIL: terminated by a signal (failed so far: ${fails})"; exit 1' TERM INT HUP
: > "$R/key.txt"

# 1. Preflight (60 s): what the driver says, then one launch and one copy
# each way. A machine that fails here fails everything after it.
running preflight
{
	date -u
	uname -a
	echo "commit: $(cat VERSION 2>/dev/null)"
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	ldconfig -p 2>/dev/null | grep libcuda || echo "libcuda not in the loader cache"
	timeout -k 2 10 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,pcie.link.gen.max,pcie.link.width.max --format=csv 2>&1 || echo "nvidia-smi not available"
} > "$R/preflight.txt" 2>&1
t=$(lim 45)
if [ "$t" = 0 ]; then
	stage preflight FAIL "no time left"
else
	timeout -k 3 "$t" ./cuda.test -test.run '^TestPreflight$' -test.v -test.count=1 -test.timeout "$((t - 2))s" >> "$R/preflight.txt" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q -- '--- PASS: TestPreflight' "$R/preflight.txt"; then
		stage preflight OK "$(grep -m1 'preflight: open:' "$R/preflight.txt" | sed 's/.*preflight: open: //')"
		grep 'preflight: \(copy\|kernel\)' "$R/preflight.txt" | sed 's/.*preflight: /  /' >> "$R/stages.txt"
	else
		why=$(grep -E '_test\.go:[0-9]+: |^panic:|test timed out' "$R/preflight.txt" | grep -v '_test\.go:[0-9]*: preflight: ' | head -1 | sed 's/^ *[a-z_]*\.go:[0-9]*: //' | cut -c1-300)
		[ "$rc" = 124 ] && why="timed out after ${t}s${why:+: $why}"
		stage preflight FAIL "rc=$rc ${why:-see preflight.txt}"
		if [ "${GPU_CHECK_FORCE:-0}" != 1 ]; then
			summary "FAIL: preflight: ${why:-rc=$rc, see preflight.txt} (stopped early; later stages not run)"
			echo "gpu-check: $(head -1 "$R/summary.txt")"
			exit 1
		fi
	fi
fi

# 2. Tests.
running tests
t=$(lim 80)
if [ "$t" = 0 ]; then
	stage tests SKIP "no time left"
else
	timeout -k 3 "$t" ./cuda.test -test.v -test.count=1 -test.short -test.timeout "$((t - 3))s" > "$R/tests.txt" 2>&1
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

# 3. The decoder on the CPU and on CUDA0: same ids, checksums within
# DECODER_TOL, tokens/s side by side.
running decoder
end=$(($(date +%s) + 50))
: > "$R/decoder.txt"
dec_ok=1
dec_n=0
dec_late=0
# A k-quant GGUF file (write-demo: dim 256, GQA) for `gogml run -model`.
./gogml gguf write-demo -type q4_k -kv-heads 2 "$R/demo-q4_k.gguf" > "$R/decoder-gguf-write.txt" 2>&1
for cfg in \
	"small|-n 32" \
	"gguf-q4_k|-model $R/demo-q4_k.gguf -n 32" \
	"medium|-vocab 4096 -dim 512 -heads 8 -layers 4 -ffn 1408 -ctx 128 -n 48" \
	"medium-q8_0|-type q8_0 -vocab 4096 -dim 512 -heads 8 -layers 4 -ffn 1408 -ctx 128 -n 48"; do
	name=${cfg%%|*}
	flags=${cfg#*|}
	for be in cpu cuda; do
		t=$(lim 20 "$end")
		f="$R/decoder-$name-$be.txt"
		if [ "$t" = 0 ]; then
			echo "no time left" > "$f"
			dec_late=1
			continue
		fi
		# shellcheck disable=SC2086
		timeout -k 2 "$t" ./gogml run -q -per-token=false -backend "$be" $flags > "$f" 2>&1
		echo "rc=$?" >> "$f"
	done
	# One comparison line per configuration.
	awk -v name="$name" -v tol="$DECODER_TOL" -v a=cpu -v b=cuda -f decoder-compare.awk \
		"$R/decoder-$name-cpu.txt" "$R/decoder-$name-cuda.txt" >> "$R/decoder.txt"
	dec_n=$((dec_n + 1))
	tail -1 "$R/decoder.txt" | grep -q '^OK' || dec_ok=0
done
if [ "$dec_ok" = 1 ]; then
	stage decoder OK "$dec_n configurations: CUDA0 ids and checksums match the CPU's"
else
	late=""
	[ "$dec_late" = 1 ] && late="some runs not started (no time left); "
	stage decoder FAIL "${late}CUDA0 differs from the CPU or did not run: $(grep -m1 '^FAIL' "$R/decoder.txt" | cut -c1-300)"
fi
sed 's/^/  /' "$R/decoder.txt" >> "$R/stages.txt"
grep -h -m1 '^backend:' "$R"/decoder-small-cuda.txt >> "$R/key.txt" 2>/dev/null

# 4. Go benchmarks, the transfers first (the figures that matter most if
# time runs out).
running bench
: > "$R/bench.txt"
bench_rc=0
for step in '30|Transfer|Alloc|LaunchOverhead' '40|Elementwise|MulMat'; do
	re=${step#*|}
	t=$(lim "${step%%|*}")
	if [ "$t" = 0 ]; then
		echo "== $re: no time left" >> "$R/bench.txt"
		bench_rc=124
		continue
	fi
	echo "== -test.bench '$re' -test.benchtime $BENCHTIME (limit ${t}s)" >> "$R/bench.txt"
	timeout -k 3 "$t" ./cuda.test -test.run '^$' -test.bench "$re" -test.benchtime "$BENCHTIME" -test.timeout "$((t - 2))s" >> "$R/bench.txt" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		bench_rc=$rc
		[ "$rc" = 124 ] && printf '\n== %s: timed out after %ss\n' "$re" "$t" >> "$R/bench.txt"
	fi
done
nb=$(grep -c '^Benchmark' "$R/bench.txt")
if [ "$bench_rc" = 0 ]; then
	stage bench OK "$nb results"
else
	stage bench FAIL "rc=$bench_rc, $nb results (first problem: $(grep -m1 -E -- '--- FAIL|panic:|test timed out|timed out after|no time left' "$R/bench.txt"))"
fi
grep '^Benchmark' "$R/bench.txt" | sed 's/^/  /' >> "$R/key.txt"

# 5. membench: CUDA0 and CUDA_Host (and the host copy reference), one
# process per size (membench writes its report only at the end), 64M
# first, each table appended as it comes.
running membench
end=$(($(date +%s) + 60))
: > "$R/membench.txt"
done_sizes=""
mb_fail=""
for s in $MEMBENCH_SIZES; do
	t=$(lim 30 "$end")
	[ "$t" = 0 ] && break
	echo "== membench $s (limit ${t}s)" >> "$R/membench.txt"
	timeout -k 2 "$t" ./gogml membench -q -types CUDA0,CUDA_Host -min "$s" -max "$s" -reps 3 -json "$R/membench-$s.json" >> "$R/membench.txt" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		done_sizes="$done_sizes $s"
	else
		echo "rc=$rc" >> "$R/membench.txt"
		mb_fail="$mb_fail $s(rc=$rc)"
	fi
done
# Key figures: CUDA0's row (GB/s by operation, host copy last) per size.
awk '/^CUDA0 \(buffer type/ { getline h; getline r; if (!shown++) print "  membench CUDA0 GB/s:" h; print "  membench CUDA0 GB/s:" r }' "$R/membench.txt" >> "$R/key.txt"
if [ -n "$mb_fail" ]; then
	stage membench FAIL "failed:$mb_fail; measured:${done_sizes:- none}"
elif [ -z "$done_sizes" ]; then
	stage membench FAIL "no size measured (no time left)"
else
	stage membench OK "sizes$done_sizes"
fi

if [ -z "$fails" ]; then
	summary "PASS: CUDA preflight, tests, decoder (CPU = CUDA0), bench and membench all passed"
	rc=0
else
	summary "FAIL: $fails failed; first: $first"
	rc=1
fi
trap - TERM INT HUP
echo "gpu-check: $(head -1 "$R/summary.txt")"
echo "gpu-check: results in $R"
exit $rc
