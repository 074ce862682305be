#!/usr/bin/env bash
# ggml-peer.sh: real ggml 0.27.0 and llama.cpp 0.7.0 from Debian, in a
# private sysroot, so that ggml's own programs (test-backend-ops,
# test-llama-archs, llama-bench, ggml-rpc-server) can judge gogml.
#
# Debian's testing (forky) and unstable (sid) package them as binaries that
# need a newer libc than the machine's, so nothing is installed: the .debs
# (and the libc/libstdc++ they need) are fetched with apt-get using a
# private sources list, lists directory and package cache (the system's apt
# state is never touched), unpacked with dpkg -x into a cache directory, and
# run through the sysroot's own dynamic loader.
#
# Usage: scripts/ggml-peer.sh COMMAND [ARGS]
#   fetch              download and unpack the pinned version (idempotent;
#                      instant when already cached); prints nothing else
#   path               fetch, then print the sysroot directory
#   version            print the pinned versions
#   preload            fetch, build the preload library with the system
#                      gcc against the sysroot's headers, print its path
#   run BIN [ARGS]     run a sysroot binary (a path, or a name looked up in
#                      the sysroot's bin, llama.cpp-tests and llama/bin dirs)
#                      through the sysroot's loader, with the preload so
#                      ggml finds its backends in the sysroot; with
#                      GGML_PEER_RPC=HOST:PORT the preload also registers
#                      that RPC server (test-backend-ops -b RPC0 then runs
#                      ggml's suite against it)
#   rpc ENDPOINT BIN [ARGS]   run with GGML_PEER_RPC=ENDPOINT
#   link               (root) make /usr/lib/x86_64-linux-gnu/ggml/backends0,
#                      ggml's compiled-in backend directory, a symlink to the
#                      sysroot's copy; only needed by programs run without the
#                      preload; never replaces a real directory or a link
#                      that points elsewhere
#   unlink             (root) remove that symlink if it is ours
#
# Environment:
#   GGML_PEER_CACHE    cache directory (default
#                      ${XDG_CACHE_HOME:-$HOME/.cache}/gogml/ggml-peer-VERSION)
#   GGML_PEER_SOURCES  apt source lines to use instead of forky+sid (e.g. a
#                      snapshot.debian.org URL once both suites moved on)
#
# Exit codes: 0 ok; 1 error (network, apt, dpkg, gcc); 2 usage;
# 3 the pinned version can no longer be downloaded (tests SKIP with the
# message this prints; they never pass silently).
set -euo pipefail

# --- the pinned versions: change them here and only here ---
GGML_VERSION=0.27.0-1
LLAMA_VERSION=1:0.7.0+dfsg-2
# -----------------------------------------------------------
GGML_PKGS="libggml0 libggml0-backend-rpc libggml-dev"
LLAMA_PKGS="llama.cpp-tools llama.cpp-tools-extra llama.cpp-tests libllama0 libllama-dev python3-gguf"
# Runtime libraries the binaries need, at whatever version the suite has
# (newer libc/libstdc++ run older binaries).
RUNTIME_PKGS="libc6 libstdc++6 libgcc-s1 libgomp1 libssl3t64"
EXIT_UNAVAILABLE=3

ARCH_TRIPLET=x86_64-linux-gnu
SYSTEM_BACKENDS=/usr/lib/$ARCH_TRIPLET/ggml/backends0
# The version in a file-system name: ':' is not welcome everywhere.
tag="ggml-${GGML_VERSION}_llama-${LLAMA_VERSION#*:}"
CACHE=${GGML_PEER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gogml/ggml-peer-$tag}
SYSROOT=$CACHE/root
HERE=$(cd "$(dirname "$0")" && pwd)
PRELOAD_SRC=$HERE/ggml-peer/preload.c

say() { echo "ggml-peer: $*" >&2; }
die() { say "$*"; exit 1; }

unavailable() {
	{
		echo "################################################################"
		echo "ggml-peer: UNAVAILABLE: $*"
		echo "ggml-peer: the pinned peer (ggml $GGML_VERSION, llama.cpp $LLAMA_VERSION)"
		echo "ggml-peer: cannot be downloaded from the configured suites any more."
		echo "ggml-peer: Update the pin in scripts/ggml-peer.sh, or point"
		echo "ggml-peer: GGML_PEER_SOURCES at a snapshot.debian.org archive that has it."
		echo "ggml-peer: Tests against ggml are SKIPPED, not passed."
		echo "################################################################"
	} >&2
	exit $EXIT_UNAVAILABLE
}

# pkg=version for every package we download.
wanted() {
	local p
	for p in $GGML_PKGS; do echo "$p=$GGML_VERSION"; done
	for p in $LLAMA_PKGS; do echo "$p=$LLAMA_VERSION"; done
	for p in $RUNTIME_PKGS; do echo "$p"; done
}

apt_private() {
	# Everything apt reads or writes besides the dpkg status file (read
	# only) and the trusted keys lives under $CACHE/apt. APT_CONFIG is
	# read before /etc/apt/apt.conf.d, so pointing Dir::Etc::parts at an
	# empty directory keeps the system's hooks (appstream, packagekit)
	# and pins out; a proxy still comes from http_proxy. Signatures are
	# checked against the system's trusted keys, but not the Release
	# files' expiry: a mirror or snapshot frozen in time must still work,
	# and the versions are pinned anyway.
	local tool=$1
	shift
	mkdir -p "$CACHE/apt/conf.d"
	printf 'Dir::Etc::parts "%s";\nDir::Etc::main "/dev/null";\n' "$CACHE/apt/conf.d" >"$CACHE/apt/apt.conf"
	APT_CONFIG=$CACHE/apt/apt.conf "$tool" -q \
		-o Dir::Etc::sourcelist="$CACHE/apt/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$CACHE/apt/lists" \
		-o Dir::Cache="$CACHE/apt/cache" \
		-o Dir::Cache::archives="$CACHE/apt/cache/archives" \
		-o Dir::Etc::preferences=/dev/null \
		-o Dir::Etc::preferencesparts=- \
		-o APT::Architecture=amd64 \
		-o APT::Architectures=amd64 \
		-o APT::Sandbox::User=root \
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o Acquire::Languages=none \
		-o Acquire::Check-Valid-Until=false \
		-o Acquire::Check-Date=false \
		"$@"
}

fetch() {
	if [ -f "$SYSROOT/.complete" ]; then
		return 0
	fi
	[ "$(uname -m)" = x86_64 ] || die "only x86_64 (amd64) is supported, not $(uname -m)"
	# One fetch at a time per cache (parallel make targets, test runs).
	mkdir -p "$CACHE"
	if command -v flock >/dev/null; then
		exec 9>"$CACHE/.lock"
		flock 9
		if [ -f "$SYSROOT/.complete" ]; then
			return 0
		fi
	fi
	command -v apt-get >/dev/null || die "apt-get not found (a Debian-family system is needed to fetch the peer)"
	command -v dpkg >/dev/null || die "dpkg not found"
	mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/debs"
	if [ -n "${GGML_PEER_SOURCES:-}" ]; then
		printf '%s\n' "$GGML_PEER_SOURCES" >"$CACHE/apt/sources.list"
	else
		printf '%s\n' \
			"deb http://deb.debian.org/debian forky main" \
			"deb http://deb.debian.org/debian sid main" >"$CACHE/apt/sources.list"
	fi
	say "apt-get update (private lists in $CACHE/apt)"
	apt_private apt-get update >"$CACHE/apt/update.log" 2>&1 || {
		cat "$CACHE/apt/update.log" >&2
		die "apt-get update failed (network?)"
	}
	# Check each pinned version is there before downloading, so a moved
	# suite is reported as such and not as a generic failure.
	local w p v have
	for w in $(wanted); do
		case $w in *=*) ;; *) continue ;; esac
		p=${w%%=*} v=${w#*=}
		have=$(apt_private apt-cache madison "$p" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | sort -u | tr '\n' ' ') || true
		case " $have " in
		*" $v "*) ;;
		*) unavailable "$p $v is not in the suites (they have: ${have:-nothing})" ;;
		esac
	done
	say "apt-get download ($(wanted | wc -l) packages)"
	rm -f "$CACHE/debs"/*.deb
	# shellcheck disable=SC2046
	(cd "$CACHE/debs" && apt_private apt-get download $(wanted)) >"$CACHE/debs/download.log" 2>&1 || {
		cat "$CACHE/debs/download.log" >&2
		if grep -q "Version .* for .* was not found\|Unable to locate package" "$CACHE/debs/download.log"; then
			unavailable "apt-get download could not find a pinned package"
		fi
		die "apt-get download failed"
	}
	local tmp=$CACHE/root.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	local deb
	for deb in "$CACHE/debs"/*.deb; do
		dpkg -x "$deb" "$tmp"
	done
	(cd "$CACHE/debs" && ls ./*.deb | sed 's|^\./||') >"$tmp/.packages"
	[ -x "$tmp/usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2" ] || [ -e "$tmp/usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2" ] ||
		die "the unpacked sysroot has no loader (usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2)"
	touch "$tmp/.complete"
	rm -rf "$SYSROOT"
	mv "$tmp" "$SYSROOT"
	# apt's lists and binary caches (~200 MB) are not needed once the
	# sysroot is complete; the .debs stay (14 MB) for reference.
	rm -rf "$CACHE/apt/lists" "$CACHE/apt/cache"
	say "sysroot ready: $SYSROOT"
}

loader() { echo "$SYSROOT/usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2"; }
libpath() { echo "$SYSROOT/usr/lib/$ARCH_TRIPLET:$SYSROOT/usr/lib/$ARCH_TRIPLET/llama"; }

# preload builds $CACHE/preload-HASH.so from preload.c (rebuilt only when
# the source changes) and prints its path.
preload() {
	fetch
	command -v gcc >/dev/null || die "gcc not found (needed to build the preload library)"
	[ -f "$PRELOAD_SRC" ] || die "missing $PRELOAD_SRC"
	local sum out
	sum=$(sha256sum "$PRELOAD_SRC" | cut -c1-16)
	out=$CACHE/preload-$sum.so
	if [ ! -f "$out" ]; then
		# Link against the sysroot's libggml-base with the system linker;
		# at run time the sysroot's loader resolves it. Only the headers
		# and the .so symlinks come from the sysroot (no libc of theirs
		# at link time: the library uses nothing but ggml and a few libc calls:
		# getenv, strtol, get_nprocs, dlsym and BSD sockets).
		gcc -shared -fPIC -O2 -Wall -Wextra -Werror \
			-I"$SYSROOT/usr/include" \
			-o "$out.$$" "$PRELOAD_SRC" \
			-L"$SYSROOT/usr/lib/$ARCH_TRIPLET" -Wl,--allow-shlib-undefined -lggml -lggml-base ||
			die "building the preload library failed"
		mv "$out.$$" "$out"
	fi
	echo "$out"
}

resolve_bin() {
	local b=$1 d
	case $b in */*)
		echo "$b"
		return
		;;
	esac
	for d in usr/bin usr/libexec/$ARCH_TRIPLET/llama.cpp-tests usr/libexec/$ARCH_TRIPLET/llama/bin; do
		if [ -x "$SYSROOT/$d/$b" ]; then
			echo "$SYSROOT/$d/$b"
			return
		fi
	done
	die "no binary $b in the sysroot ($SYSROOT)"
}

run() {
	[ $# -ge 1 ] || { say "usage: run BIN [ARGS]"; exit 2; }
	local pre bin
	pre=$(preload)
	bin=$(resolve_bin "$1")
	shift
	check_system_backends
	GGML_PEER_BACKEND_DIR=$SYSROOT/usr/lib/$ARCH_TRIPLET/ggml/backends0 \
		exec "$(loader)" --library-path "$(libpath)" --preload "$pre" "$bin" "$@"
}

# A real ggml in the compiled-in directory would be loaded next to the
# sysroot's backends (ggml searches it first): refuse to mix versions.
check_system_backends() {
	if [ -d "$SYSTEM_BACKENDS" ] && [ ! -L "$SYSTEM_BACKENDS" ]; then
		say "WARNING: $SYSTEM_BACKENDS is a real ggml install; ggml will load its backends too (mixed versions)"
	fi
}

link() {
	fetch
	local target=$SYSROOT/usr/lib/$ARCH_TRIPLET/ggml/backends0
	if [ -L "$SYSTEM_BACKENDS" ]; then
		if [ "$(readlink "$SYSTEM_BACKENDS")" = "$target" ]; then
			say "$SYSTEM_BACKENDS already links to $target"
			return 0
		fi
		die "$SYSTEM_BACKENDS is a symlink to $(readlink "$SYSTEM_BACKENDS"), not ours: left alone"
	fi
	if [ -e "$SYSTEM_BACKENDS" ]; then
		die "$SYSTEM_BACKENDS exists (a real ggml install?): left alone"
	fi
	[ "$(id -u)" = 0 ] || die "link needs root: it creates $SYSTEM_BACKENDS"
	say "creating symlink $SYSTEM_BACKENDS -> $target (ggml's compiled-in backend directory; 'unlink' removes it)"
	mkdir -p "$(dirname "$SYSTEM_BACKENDS")"
	ln -s "$target" "$SYSTEM_BACKENDS"
}

unlink_backends() {
	if [ -L "$SYSTEM_BACKENDS" ] && [ "$(readlink "$SYSTEM_BACKENDS")" = "$SYSROOT/usr/lib/$ARCH_TRIPLET/ggml/backends0" ]; then
		rm "$SYSTEM_BACKENDS"
		rmdir "$(dirname "$SYSTEM_BACKENDS")" 2>/dev/null || true
		say "removed $SYSTEM_BACKENDS"
	else
		say "$SYSTEM_BACKENDS is not our symlink: left alone"
	fi
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
fetch) fetch ;;
path)
	fetch
	echo "$SYSROOT"
	;;
version) echo "ggml $GGML_VERSION llama.cpp $LLAMA_VERSION" ;;
preload) preload ;;
run) run "$@" ;;
rpc)
	[ $# -ge 2 ] || { say "usage: rpc HOST:PORT BIN [ARGS]"; exit 2; }
	ep=$1
	shift
	GGML_PEER_RPC=$ep run "$@"
	;;
link) link ;;
unlink) unlink_backends ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
