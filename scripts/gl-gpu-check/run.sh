#!/bin/sh
# run.sh [RESULTS]: the OpenGL backend's device check, on a machine with
# an EGL-capable GPU driver (NVIDIA: EGL_EXT_platform_device). Needs no Go:
# the binaries were built by build.sh. Writes logs into RESULTS (default
# ./gl-results) and prints a summary.
set -u
here=$(cd "$(dirname "$0")" && pwd)
res=${1:-gl-results}
mkdir -p "$res"

# glvnd's libEGL and libGLdispatch travel with the binaries; prefer the
# machine's own when it has them.
if ! ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1 '; then
	export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# glvnd finds vendor libraries through JSON files; point it at NVIDIA's
# when the standard directory has none.
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && ! ls /usr/share/glvnd/egl_vendor.d/*.json >/dev/null 2>&1; then
	for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json; do
		if [ -f "$f" ]; then
			export __EGL_VENDOR_LIBRARY_FILENAMES="$f"
			break
		fi
	done
fi
export GOGML_REQUIRE_GL=1
nvidia-smi -L > "$res/nvidia-smi.txt" 2>&1 || true

echo "== device"
"$here/opengl.test" -test.run 'TestDeviceInfo' -test.v 2>&1 | tee "$res/device.txt" | grep -E 'device:|GL |limits|memory|upload|FAIL|ok|PASS' || true
echo "== tests (conformance, split beyond max buffer size, ops)"
"$here/opengl.test" -test.v > "$res/tests.txt" 2>&1
rc=$?
grep -E '^(--- FAIL|FAIL|ok|PASS)' "$res/tests.txt" | tail -20
echo "tests exit status $rc"
echo "== benchmarks"
"$here/opengl.test" -test.run XXX -test.bench . -test.benchtime 1s > "$res/bench.txt" 2>&1
grep Benchmark "$res/bench.txt"
echo "== decoder: CPU vs OpenGL logits checksum"
"$here/gogml" run -q -per-token=false -backend cpu > "$res/run-cpu.txt" 2>&1
"$here/gogml" run -q -per-token=false -backend opengl > "$res/run-opengl.txt" 2>&1
grep -E 'backend|checksum|tokens/s' "$res/run-cpu.txt" "$res/run-opengl.txt"
exit $rc
