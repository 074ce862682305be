#!/bin/sh
# gguf-peer.sh [DIR]: fetch the GGUF peer the gguf tests compare against:
# Debian unstable's python3-gguf (llama.cpp 0.7.0's gguf-py), unpacked into
# DIR/root (default /tmp/gogml-gguf-peer), and the host's python3-numpy.
# A private apt state (DIR/etc, DIR/lists) keeps the host's sources and
# lists untouched; the mirror is the one the host's apt already uses.
# Needs root for the numpy install. Then:
#   GOGML_GGUF_PEER=DIR/root/usr/lib/python3/dist-packages go test ./gguf
set -eu
dir=${1:-/tmp/gogml-gguf-peer}
mkdir -p "$dir/etc" "$dir/lists/partial" "$dir/root"
uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | awk '{print $1; exit}')
[ -n "$uri" ] || uri=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$uri" ] || { echo "gguf-peer: no Debian mirror in the host's apt sources" >&2; exit 1; }
echo "deb $uri sid main" > "$dir/etc/sources.list"
O="-o Dir::Etc::sourcelist=$dir/etc/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$dir/lists -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get $O -q update
cd "$dir"
rm -f python3-gguf_*.deb
# shellcheck disable=SC2086
apt-get $O -q download python3-gguf
dpkg -x python3-gguf_*.deb root
python3 -c 'import numpy' 2>/dev/null || /usr/bin/python3 -c 'import numpy' 2>/dev/null || apt-get install -y -q python3-numpy
echo "gguf-peer: python3-gguf in $dir/root/usr/lib/python3/dist-packages"
