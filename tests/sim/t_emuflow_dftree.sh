#!/bin/bash
# emuflow with "dftree": true (no ibsim: the in-process emulator and its
# traffic model): on the dFtree paper's non-oversubscribed testbed the
# victim 2-3 runs alone, three contributors to H5 join at 2 s, the SM's
# dFtree loop (interval 1 s) sends lane orders, the hosts' agents move
# their flows to H5 onto the slow SL, and the victim gets back at least
# half of what it lost within two intervals; Exp II (a cut uplink puts
# the victim beside a contributor) likewise; "moves" with "dftree" is
# refused.
. "$(dirname "$0")/lib.sh"

EMUFLOW="$SIM_ROOT/build/emuflow"
net="$SIM_ROOT/tests/tools/emuflow/testbed-3a.net"
cat >"$SIM_TMP/exp1.json" <<'JSON'
{ "step": 1, "end": 6, "dftree": true,
  "flows": [
    { "name": "2-3", "from": "H2", "to": "H3", "gbps": 12.9 },
    { "name": "1-5", "from": "H1", "to": "H5", "gbps": 12.9, "start": 2 },
    { "name": "3-5", "from": "H3", "to": "H5", "gbps": 12.9, "start": 2 },
    { "name": "6-5", "from": "H6", "to": "H5", "gbps": 12.9, "start": 2 } ],
  "sinks": { "H5": 12.9 } }
JSON
# Exp II: all flows from 0 s, the victim 2-4 on A's second uplink (link
# 2) until it is cut at 4 s; the SM's reroute puts it beside 1-5 on link
# 1.  Without dFtree it is held back by 1-5 from then on; with dFtree
# the contributors are already on the slow lane and it keeps its rate.
cat >"$SIM_TMP/exp2.json" <<'JSON'
{ "step": 1, "end": 7, "dftree": true,
  "flows": [
    { "name": "2-4", "from": "H2", "to": "H4", "gbps": 12.9 },
    { "name": "1-5", "from": "H1", "to": "H5", "gbps": 12.9 },
    { "name": "3-5", "from": "H3", "to": "H5", "gbps": 12.9 },
    { "name": "6-5", "from": "H6", "to": "H5", "gbps": 12.9 } ],
  "sinks": { "H5": 12.9 },
  "cuts": [ { "at": 4, "switch": "A", "port": 4 } ] }
JSON
# run NAME: the scenario $SIM_TMP/NAME.json without dFtree (emulated
# time, no wall clock) into NAME.off, and with it (its "end" seconds of
# wall clock) into NAME.on, in the background; NAME.err has the latter's
# stderr
run() {
	sed 's/"dftree": true/"dftree": false/' "$SIM_TMP/$1.json" >"$SIM_TMP/$1-off.json"
	"$EMUFLOW" "$net" "$SIM_TMP/$1-off.json" >"$SIM_TMP/$1.off" 2>&1 ||
		{ cat "$SIM_TMP/$1.off"; fail "emuflow $1 without dftree failed"; }
	"$EMUFLOW" "$net" "$SIM_TMP/$1.json" >"$SIM_TMP/$1.on" 2>"$SIM_TMP/$1.err" &
}
# victim FILE T: the victim's rate in the row of time T (the rate at its
# step's end)
victim() { awk -v t="$2" '$1 == t { print $2 }' "$SIM_TMP/$1"; }
# recovered NAME ALONE WITH AFTER: the victim had more than 12.5 Gb/s, lost
# more than half of it without dFtree, and got at least half the loss back
# with it
recovered() {
	[ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ] || fail "$1: missing rows"
	awk -v a="$2" -v w="$3" -v f="$4" \
		'BEGIN { exit !(a > 12.5 && w < 6 && f - w >= (a - w) / 2) }' ||
		fail "$1: victim $2 alone, $3 without dFtree, $4 with it"
}
run exp1
pid1=$!
run exp2
wait "$pid1" || { cat "$SIM_TMP/exp1.on" "$SIM_TMP/exp1.err"; fail "emuflow exp1 failed"; }
wait $! || { cat "$SIM_TMP/exp2.on" "$SIM_TMP/exp2.err"; fail "emuflow exp2 failed"; }
cat "$SIM_TMP"/exp[12].off "$SIM_TMP"/exp[12].on
# Exp I: alone at 1 s, held back at 5 s without dFtree, at 3 s (two
# intervals after the contributors joined) with it
alone=$(victim exp1.on 1.00) with=$(victim exp1.off 5.00) after=$(victim exp1.on 3.00)
recovered "Exp I" "$alone" "$with" "$after"
# Exp II: before the cut at 3 s, after it at 5 s
alone2=$(victim exp2.off 3.00) with2=$(victim exp2.off 5.00) after2=$(victim exp2.on 5.00)
recovered "Exp II" "$alone2" "$with2" "$after2"
for e in exp1 exp2; do
	grep -q 'dftree: [1-9][0-9]* lane orders' "$SIM_TMP/$e.err" ||
		{ cat "$SIM_TMP/$e.err"; fail "$e: no lane orders"; }
done

printf '{ "end": 1, "dftree": true, "flows": [], "moves": [] }\n' >"$SIM_TMP/both.json"
rc=0
"$EMUFLOW" "$net" "$SIM_TMP/both.json" >/dev/null 2>"$SIM_TMP/err2" || rc=$?
[ "$rc" = 2 ] && grep -q '"moves" with "dftree"' "$SIM_TMP/err2" ||
	{ cat "$SIM_TMP/err2"; fail "moves with dftree: exit $rc, not refused"; }
pass "emuflow dftree: Exp I victim $alone -> $with -> $after Gb/s; Exp II $alone2 -> $with2 -> $after2"
