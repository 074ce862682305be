#!/bin/sh
# ensure-gl-deps.sh: make sure the OpenGL backend can be built and run
# headless with Mesa (llvmpipe) on Debian/Ubuntu.
#
# Needed: pkg-config and libegl-dev to build (-tags opengl,egl links only
# libEGL), libegl1 + libegl-mesa0 + libgl1-mesa-dri to run (the Mesa EGL
# vendor library and the llvmpipe driver). libgl-dev is installed too so
# that a build with "opengl" alone (go-gl linking libGL) also works.
#
# When something is missing and we run as root with apt-get, install it;
# otherwise stop (exit 1) with the one command that installs it, or that
# skips the OpenGL tests: going on would only fail later, building with
# the GL tags without libEGL's headers.
set -eu

pkgs="pkg-config libegl-dev libgl-dev libegl1 libegl-mesa0 libgl1-mesa-dri"
missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-gl-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
	echo "ensure-gl-deps: missing Debian packages:$missing" >&2
	echo "  install them:            sudo apt-get install -y --no-install-recommends$missing" >&2
	echo "  or skip the OpenGL tests: make test SKIP_GL=1" >&2
	exit 1
fi
