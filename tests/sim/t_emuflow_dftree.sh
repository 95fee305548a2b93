#!/bin/bash
# emuflow with "dftree": true (no ibsim: the in-process emulator and its
# traffic model): on the dFtree paper's non-oversubscribed testbed the
# victim 2-3 runs alone, three contributors to H5 join at 2 s, the SM's
# dFtree loop (interval 1 s) sends lane orders, the hosts' agents move
# their flows to H5 onto the slow SL, and the victim gets back at least
# half of what it lost within two intervals; "moves" with "dftree" is
# refused.
. "$(dirname "$0")/lib.sh"

EMUFLOW="$SIM_ROOT/build/emuflow"
net="$SIM_ROOT/tests/tools/emuflow/testbed-3a.net"
sc="$SIM_TMP/exp1.json"
cat >"$sc" <<'JSON'
{ "step": 1, "end": 6, "dftree": true,
  "flows": [
    { "name": "2-3", "from": "H2", "to": "H3", "gbps": 12.9 },
    { "name": "1-5", "from": "H1", "to": "H5", "gbps": 12.9, "start": 2 },
    { "name": "3-5", "from": "H3", "to": "H5", "gbps": 12.9, "start": 2 },
    { "name": "6-5", "from": "H6", "to": "H5", "gbps": 12.9, "start": 2 } ],
  "sinks": { "H5": 12.9 } }
JSON
# the same without dFtree (emulated time, no wall clock): the victim held back
sed 's/"dftree": true/"dftree": false/' "$sc" >"$SIM_TMP/off.json"
"$EMUFLOW" "$net" "$SIM_TMP/off.json" >"$SIM_TMP/off" 2>"$SIM_TMP/err" ||
	{ cat "$SIM_TMP/off" "$SIM_TMP/err"; fail "emuflow without dftree failed"; }
"$EMUFLOW" "$net" "$sc" >"$SIM_TMP/out" 2>"$SIM_TMP/err" ||
	{ cat "$SIM_TMP/out" "$SIM_TMP/err"; fail "emuflow failed"; }
cat "$SIM_TMP/off" "$SIM_TMP/out"
# victim FILE T: the victim's rate in the row of time T (the rate at its
# step's end)
victim() { awk -v t="$2" '$1 == t { print $2 }' "$SIM_TMP/$1"; }
# after: the rate at 4 s, two intervals after the contributors joined
alone=$(victim out 1.00) with=$(victim off 5.00) after=$(victim out 3.00)
[ -n "$alone" ] && [ -n "$with" ] && [ -n "$after" ] || fail "missing rows"
awk -v a="$alone" -v w="$with" -v f="$after" \
	'BEGIN { exit !(a > 12.5 && w < 6 && f - w >= (a - w) / 2) }' ||
	fail "victim $alone alone, $with with the contributors, $after with dFtree"
grep -q 'dftree: [1-9][0-9]* lane orders' "$SIM_TMP/err" ||
	{ cat "$SIM_TMP/err"; fail "no lane orders"; }

printf '{ "end": 1, "dftree": true, "flows": [], "moves": [] }\n' >"$SIM_TMP/both.json"
rc=0
"$EMUFLOW" "$net" "$SIM_TMP/both.json" >/dev/null 2>"$SIM_TMP/err2" || rc=$?
[ "$rc" = 2 ] && grep -q '"moves" with "dftree"' "$SIM_TMP/err2" ||
	{ cat "$SIM_TMP/err2"; fail "moves with dftree: exit $rc, not refused"; }
pass "emuflow dftree: victim $alone -> $with -> $after Gb/s"
