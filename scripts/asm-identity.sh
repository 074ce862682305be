#!/usr/bin/env bash
# asm-identity.sh REV FILE...: shows that package vec's generated assembly
# assembles to the same machine code as the hand-written files it replaced.
# FILE... are .s files of internal/kernels/cpukernels/vec as they stood at
# git revision REV (with that revision's .h includes); each function they
# define must be found, byte for byte, among the functions of the .s files
# in the working tree's package vec. Both sides go through `go tool asm -S`;
# a relocation to a read-only table is compared by the table's bytes, not
# its name. Prints one line per function and exits 1 on any difference.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 REV FILE..." >&2; exit 2; }
rev=$1; shift
root=$(git rev-parse --show-toplevel)
pkg=internal/kernels/cpukernels/vec
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old" "$tmp/new"
for h in $(git -C "$root" ls-tree --name-only "$rev" "$pkg/" | grep '\.h$' || true); do
	git -C "$root" show "$rev:$h" >"$tmp/old/$(basename "$h")"
done
for f in "$@"; do git -C "$root" show "$rev:$pkg/$f" >"$tmp/old/$f"; done
cp "$root/$pkg"/*.s "$root/$pkg"/*.h "$tmp/new/" 2>/dev/null || cp "$root/$pkg"/*.s "$tmp/new/"
inc=$(go env GOROOT)/pkg/include
# norm prints, per TEXT symbol, "FUNC name size=N" then its hex bytes and
# relocations, tables replaced by their contents.
norm() {
	awk '
	/^[^\t]/ { kind = ($2 == "STEXT") ? "text" : "data"; name = $1; sub(/^.*\./, "", name)
		if (kind == "text") { order[++nf] = name; hdr[name] = "FUNC " name " " $5 }
		next }
	/^\t0x[0-9a-f]+ [0-9a-f][0-9a-f] / { b = substr($0, 9, 47); gsub(/ +$/, "", b)
		if (kind == "text") body[name] = body[name] "\n" b; else data[name] = data[name] " " b; next }
	/^\trel / { rel[name] = rel[name] "\n" $0; next }
	END { for (i = 1; i <= nf; i++) { n = order[i]; r = rel[n]
			m = split(r, rl, "\n"); out = ""
			for (j = 2; j <= m; j++) { split(rl[j], f, " "); s = f[4]; t = s; sub(/\+.*/, "", t); a = s; sub(/^[^+]*/, "", a)
				if (t in data) s = "table[" data[t] "]" a
				out = out "\n" f[2] " " f[3] " " s }
			print hdr[n] body[n] out "\nEND" } }'
}
for side in old new; do
	for s in "$tmp/$side"/*.s; do
		(cd "$tmp/$side" && go tool asm -S -I "$inc" -I . -D GOOS_linux -D GOARCH_amd64 \
			-p github.com/gogml/gogml/$pkg -o /dev/null "$(basename "$s")") | norm
	done >"$tmp/$side.txt"
done
# split into one file per function
for side in old new; do
	mkdir -p "$tmp/$side.fn"
	awk -v d="$tmp/$side.fn" '/^FUNC /{ f = d "/" $2 } { print > f }' "$tmp/$side.txt"
done
bad=0; n=0
for f in "$tmp/old.fn"/*; do
	name=$(basename "$f"); n=$((n + 1))
	if [ ! -f "$tmp/new.fn/$name" ]; then echo "MISSING   $name"; bad=1
	elif cmp -s "$f" "$tmp/new.fn/$name"; then echo "identical $name ($(head -1 "$f" | cut -d' ' -f3))"
	else echo "DIFFERS   $name"; { diff "$f" "$tmp/new.fn/$name" || true; } | head -20; bad=1; fi
done
echo "$n functions compared"
exit $bad
