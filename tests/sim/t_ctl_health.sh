#!/bin/bash
# ibsmctl health, the client's side (no daemon, no ibsim: a stand-in
# socket, fakectl.py, records what it sends and answers a fixed reply):
# `health` sends {"cmd": "health"}; `--save-baseline FILE` sends FILE made
# absolute from ibsmctl's working directory, `--save-baseline` alone
# true (the daemon's STATE_DIR/baseline); anything else is refused with
# the usage before anything is sent; the text of a health reply is one
# line per port then the baseline's differences, of a save its path and
# counts.
. "$(dirname "$0")/common.sh"

sock="$SIM_TMP/ctl.sock"
reqs="$SIM_TMP/requests"
health="$SIM_TMP/health.json"
saved="$SIM_TMP/saved.json"
cat >"$health" <<'JSON'
{"ok": true,
 "unhealthy": [{"guid": "0x0002c90100000000", "node": "L0-S0", "port": 3,
   "counters": {"SymbolErrorCounter": 12}, "reasons": ["SymbolErrorCounter 12/h over 10/h"]}],
 "flapping": [], "degraded": [], "hot": [],
 "baseline": {"missing": [{"kind": "link",
   "a": {"guid": "0x0002c90100000000", "node": "L0-S0", "port": 4},
   "b": {"guid": "0x0002c90100000003", "node": "L1-S1", "port": 1}}],
   "extra": [], "moved": []}}
JSON
echo '{"ok": true, "baseline": {"saved": "/x/baseline", "nodes": 8, "links": 7}}' >"$saved"

# serve REPLY COUNT: the stand-in, for COUNT requests
FAKE_PID=
serve() {
	[ -z "$FAKE_PID" ] || wait_pid "$FAKE_PID" 10 || fail "fakectl.py did not end"
	rm -f "$reqs" "$sock"
	python3 "$SIM_ROOT/tests/sim/fakectl.py" "$sock" "$1" "$reqs" "$2" &
	FAKE_PID=$!
	bg_register "$FAKE_PID"
	wait_until 10 test -S "$sock" || fail "fakectl.py did not start"
}
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
# request N: the Nth request sent, keys sorted
request() { sed -n "${1}p" "$reqs" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))'; }

serve "$health" 2
out=$(ctl health) || fail "ibsmctl health: $out"
want='unhealthy "L0-S0"[3] (0x0002c90100000000): SymbolErrorCounter=12; SymbolErrorCounter 12/h over 10/h
missing   link "L0-S0"[4] (0x0002c90100000000) -- "L1-S1"[1] (0x0002c90100000003)'
[ "$out" = "$want" ] || fail "ibsmctl health printed: $out"
ctl health --json | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["baseline"]["missing"][0]["b"]["port"] == 1, d' ||
	fail "ibsmctl health --json"
[ "$(request 1)" = '{"cmd": "health"}' ] && [ "$(request 2)" = '{"cmd": "health"}' ] ||
	fail "health sent: $(cat "$reqs")"
pass "health: the request, the text (a port, a missing cable), --json"

serve "$saved" 3
mkdir -p "$SIM_TMP/wd"
out=$(cd "$SIM_TMP/wd" && ctl health --save-baseline sub/b.topo) || fail "--save-baseline FILE: $out"
[ "$out" = "baseline saved to /x/baseline: 8 nodes, 7 links" ] || fail "--save-baseline printed: $out"
ctl health --save-baseline >/dev/null || fail "--save-baseline alone"
ctl health --save-baseline /abs/b >/dev/null || fail "--save-baseline /abs/b"
[ "$(request 1)" = "{\"cmd\": \"health\", \"save_baseline\": \"$SIM_TMP/wd/sub/b.topo\"}" ] ||
	fail "--save-baseline sub/b.topo sent: $(request 1)"
[ "$(request 2)" = '{"cmd": "health", "save_baseline": true}' ] || fail "--save-baseline sent: $(request 2)"
[ "$(request 3)" = '{"cmd": "health", "save_baseline": "/abs/b"}' ] || fail "--save-baseline /abs/b sent: $(request 3)"
pass "health --save-baseline [FILE]: FILE made absolute, true without it; the saved path and counts printed"

wait_pid "$FAKE_PID" 10 || fail "fakectl.py did not end"
rm -f "$reqs"
for args in "--bogus" "--save-baseline a b" "--save-baseline -x"; do
	# shellcheck disable=SC2086 # the words are the arguments
	out=$(ctl health $args 2>&1); rc=$?
	[ "$rc" -eq 1 ] && [ "$out" = "ibsmctl: usage: health [--save-baseline [FILE]]" ] ||
		fail "health $args: exit $rc: $out"
done
[ ! -e "$reqs" ] || fail "a refused command line was sent: $(cat "$reqs")"
pass "health with other arguments: refused with the usage, nothing sent"
