#!/bin/bash
# The status page on the HTTP listener (http.listen), loaded by headless
# Chromium (Debian chromium): the demo fabric with the cable L0-S2[4]
# unlinked from ibsim's console after the first configuration and a
# SymbolErrorCounter of 50 set on L0-S1[2].  The page's text (Chromium's
# DOM) says MASTER; /fabric.svg has one node group per switch that
# ibnetdiscover finds and the unlinked cable as the one dashed, failed
# edge between L0-S2 and L1-S0; `ibsmctl topology --svg` draws the same;
# the page's headers forbid every script and outside asset; other methods
# 405, other paths 404; /api/status is the status JSON; a screenshot is
# taken and is no blank page (> 10 KB).  Last, the health section of the
# page names L0-S1 as an unhealthy port (the control command "health"
# and the performance manager behind it).
. "$(dirname "$0")/common.sh"

command -v chromium >/dev/null || fail "Debian's chromium is missing (make deps)"
command -v curl >/dev/null || fail "curl is missing (make deps)"

sim_start "$SIM_ROOT/etc/demo.net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
policy="$SIM_TMP/ibsmd.yaml"
port=$(free_port)
url="http://127.0.0.1:$port"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
printf 'http:\n  listen: "127.0.0.1:%s"\n' "$port" >"$policy"
on_host_bg H-0 "$IBSMD" -c "$policy" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
wait_up 20 "$log" "from the daemon"

sim_dump "$SIM_TMP/up" || fail "infiniband-diags: $(tail -n 3 "$SIM_TMP/up.err")"
n_sw=$(grep -c '^Switch' "$SIM_TMP/up.topo")
[ "$n_sw" -gt 0 ] || fail "ibnetdiscover found no switch"

n=$(sweeps)
sim_cmd 'Unlink "L0-S2"[4]' >/dev/null
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after Unlink of L0-S2[4]"
ctl perfmgr sweep >/dev/null 2>&1	# the counters before (when there is a performance manager)
sim_cmd 'PerformanceSet "L0-S1"[2] PortCounters.SymbolErrorCounter=50' >/dev/null
l0s1=$(awk '/^Switch/ && /"L0-S1"/ { for (i = 1; i <= NF; i++) if ($i ~ /^lid$/) { print $(i + 1); exit } }' "$SIM_TMP/up.topo")
[ -n "$l0s1" ] || fail "no LID of L0-S1 in ibnetdiscover's output"
on_host H-0 perfquery "$l0s1" 2 >"$SIM_TMP/pq.txt" 2>&1 ||
	fail "perfquery L0-S1 port 2: $(tail -n 3 "$SIM_TMP/pq.txt")"
grep -Eq '^SymbolErrorCounter:\.+50$' "$SIM_TMP/pq.txt" ||
	fail "perfquery: L0-S1[2] SymbolErrorCounter not 50: $(grep Symbol "$SIM_TMP/pq.txt")"

# the picture of the last heavy sweep: drawn on a worker, 503 until then
svg_ready() {
	curl -s -o "$SIM_TMP/fabric.svg" -w '%{http_code}' "$url/fabric.svg" >"$SIM_TMP/svg.code" &&
		[ "$(cat "$SIM_TMP/svg.code")" = 200 ] &&
		python3 "$SIM_ROOT/tests/sim/svg_check.py" "$SIM_TMP/fabric.svg" --failed L0-S2 L1-S0 \
			--switches "$n_sw" >"$SIM_TMP/svg.check" 2>&1
}
wait_until 20 svg_ready ||
	fail "/fabric.svg (HTTP $(cat "$SIM_TMP/svg.code")): $(cat "$SIM_TMP/svg.check" 2>/dev/null || head -c 300 "$SIM_TMP/fabric.svg")"
pass "/fabric.svg: $(cat "$SIM_TMP/svg.check") ($n_sw switches in ibnetdiscover)"

ctl topology --svg >"$SIM_TMP/ctl.svg" || fail "ibsmctl topology --svg: $(head -c 300 "$SIM_TMP/ctl.svg")"
python3 "$SIM_ROOT/tests/sim/svg_check.py" "$SIM_TMP/ctl.svg" --failed L0-S2 L1-S0 --switches "$n_sw" \
	>"$SIM_TMP/ctl.check" 2>&1 || fail "ibsmctl topology --svg: $(cat "$SIM_TMP/ctl.check")"
pass "ibsmctl topology --svg: $(cat "$SIM_TMP/ctl.check")"

# headers, methods, paths
curl -s -D "$SIM_TMP/page.h" -o "$SIM_TMP/page.curl" "$url/" || fail "curl $url/"
grep -qi "^Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:" "$SIM_TMP/page.h" ||
	fail "GET /: no Content-Security-Policy: $(cat "$SIM_TMP/page.h")"
grep -qi '^X-Content-Type-Options: nosniff' "$SIM_TMP/page.h" || fail "GET /: no nosniff: $(cat "$SIM_TMP/page.h")"
grep -qi '^Content-Type: text/html' "$SIM_TMP/page.h" || fail "GET /: not text/html: $(cat "$SIM_TMP/page.h")"
grep -Eqi '<script|src="https?:|href="https?:' "$SIM_TMP/page.curl" && fail "GET /: a script or an outside asset"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/")
[ "$code" = 405 ] || fail "POST /: HTTP $code, not 405"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/nowhere")
[ "$code" = 404 ] || fail "GET /nowhere: HTTP $code, not 404"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")
[ "$code" = 200 ] || fail "GET /metrics: HTTP $code"
curl -s "$url/api/status" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["state"] == "MASTER" and d["heavy_sweeps"] >= 2, (d["state"], d["heavy_sweeps"])
' || fail "GET /api/status: not the status JSON of a MASTER"
code=$(curl -s -o "$SIM_TMP/health.json" -w '%{http_code}' "$url/api/health")
python3 -c '
import json, sys
d = json.load(open(sys.argv[2]))
assert (sys.argv[1] == "200" and "unhealthy" in d) or (sys.argv[1] == "503" and d["error"]), d
' "$code" "$SIM_TMP/health.json" || fail "GET /api/health: HTTP $code $(head -c 300 "$SIM_TMP/health.json")"
pass "GET /: CSP and nosniff, no script; POST 405, /nowhere 404, /metrics 200, /api/status MASTER, /api/health HTTP $code"

# Chromium: its own profile under $SIM_TMP
chrome() {
	HOME="$SIM_TMP" timeout 30 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$SIM_TMP/chromium" --no-first-run "$@" 2>>"$SIM_TMP/chromium.err"
}
chrome --dump-dom "$url/" >"$SIM_TMP/page.dom" || fail "chromium --dump-dom: $(tail -n 3 "$SIM_TMP/chromium.err")"
python3 "$SIM_ROOT/tests/sim/page_text.py" "$SIM_TMP/page.dom" state >"$SIM_TMP/page.state" ||
	fail "the page: $(cat "$SIM_TMP/page.state")"
[ "$(cat "$SIM_TMP/page.state")" = MASTER ] || fail "the page's state: $(cat "$SIM_TMP/page.state"), not MASTER"
grep -q 'class="node switch"' "$SIM_TMP/page.dom" || fail "the page has no picture"
chrome --screenshot="$SIM_TMP/page.png" --window-size=1280,1024 "$url/" >/dev/null ||
	fail "chromium --screenshot: $(tail -n 3 "$SIM_TMP/chromium.err")"
size=$(stat -c %s "$SIM_TMP/page.png" 2>/dev/null || echo 0)
[ "$size" -gt 10240 ] || fail "the screenshot is $size bytes, not more than 10 KB"
pass "chromium: the page says MASTER and holds the picture; screenshot $size bytes"

# the unhealthy port, once the performance manager has read it again
page_names_it() {
	ctl perfmgr sweep >/dev/null 2>&1
	chrome --dump-dom "$url/" >"$SIM_TMP/page2.dom" &&
		python3 "$SIM_ROOT/tests/sim/page_text.py" "$SIM_TMP/page2.dom" unhealthy \
			>"$SIM_TMP/unhealthy.txt" && grep -qx 'L0-S1 2' "$SIM_TMP/unhealthy.txt"
}
wait_until 15 page_names_it ||
	fail "the page's unhealthy ports: '$(cat "$SIM_TMP/unhealthy.txt")', not L0-S1 port 2 ($(grep -A1 'Fabric health' "$SIM_TMP/page2.dom" | tail -n 1))"
pass "the page names L0-S1 port 2 unhealthy"
