# decoder-compare.awk: compare two `gogml run` outputs (the reference
# backend's file first, the device's second) and print one line:
#   OK|FAIL NAME: A tok/s, B tok/s (xB/A); checksums; ids equal|DIFFER; rc
# OK needs both runs to exit 0 (each file ends with "rc=N"), the same
# generated ids and token count, and logits checksums (sum, sumsq) within
# relative tolerance tol. Variables: name, tol, a, b (backend labels).
FNR == 1 { i++ }
/^generated:/ { ids[i] = $2 }
/^logits checksum:/ { for (k = 3; k <= NF; k++) { split($k, kv, "="); v[i, kv[1]] = kv[2] } }
/^per token:/ { tps[i] = $(NF - 1) }
/^rc=/ { rc[i] = substr($0, 4) }
function abs(x) { return x < 0 ? -x : x }
function rel(x, y,   m) { m = abs(x) > abs(y) ? abs(x) : abs(y); return m == 0 ? 0 : abs(x - y) / m }
function dash(s) { return s == "" ? "-" : s }
END {
	ds = rel(v[1, "sum"] + 0, v[2, "sum"] + 0)
	dq = rel(v[1, "sumsq"] + 0, v[2, "sumsq"] + 0)
	ok = rc[1] == "0" && rc[2] == "0" && ids[1] != "" && ids[1] == ids[2] && v[1, "n"] != "" && v[1, "n"] == v[2, "n"] && ds <= tol && dq <= tol
	printf "%s %s: %s %s tok/s, %s %s tok/s (x%s); checksum %s sum=%s sumsq=%s, %s sum=%s sumsq=%s (rel diff %.2g, %.2g; tolerance %s); ids %s; rc %s=%s %s=%s\n", \
		ok ? "OK  " : "FAIL", name, a, dash(tps[1]), b, dash(tps[2]), \
		(tps[1] > 0 && tps[2] > 0) ? sprintf("%.2f", tps[2] / tps[1]) : "-", \
		a, dash(v[1, "sum"]), dash(v[1, "sumsq"]), b, dash(v[2, "sum"]), dash(v[2, "sumsq"]), ds, dq, tol, \
		ids[1] == "" ? "missing" : (ids[1] == ids[2] ? "equal" : "DIFFER"), a, dash(rc[1]), b, dash(rc[2])
}
