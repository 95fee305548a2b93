#!/bin/bash
# dFtree under ibsim (ibsmd(8) HOT-SPOT SLOW LANES): the demo fabric,
# congestion.mode dftree with a 2 s interval.  A script ramps counters
# from ibsim's console with the clock: PortXmitWait of the switch port facing
# H-5 and of H-1, H-2 and H-3's ports over the threshold of 100,000 ticks a
# second, PortXmitData of H-1 and H-2 at 0.3 of their 4X SDR link and of
# H-3 at 0.7.  Exactly H-1 and H-2 get one repath (69)
# each naming H-5's LID and the slow SL, seen by ibsm-listen on them; H-3
# gets none; saquery -p from H-1 to H-5 answers the slow SL while the
# hot-spot lasts; the ramp stops: exactly one unpath (68) with the fast SL
# each, saquery answers the fast SL again; no Set of any kind (LFT, SL2VL,
# VLArb, PortInfo) from the SM during any of it (its MAD counts).
. "$(dirname "$0")/common.sh"

net="$SIM_ROOT/etc/demo.net"
pol="$SIM_TMP/policy.yaml"
printf 'congestion:\n  mode: dftree\n  fast_sl: 0\n  slow_sl: 1\n  interval_s: 2\n' >"$pol"
"$IBSMD" -n -c "$pol" >/dev/null || fail "the policy is refused: $("$IBSMD" -n -c "$pol" 2>&1)"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 30 "$log"
lid_of() { on_host "$1" smpquery -D portinfo 0 | sed -n 's/^Lid:\.*//p'; }
l5=$(lid_of H-5) l1=$(lid_of H-1)
[ -n "$l5" ] && [ -n "$l1" ] || fail "smpquery: the LIDs of H-5 and H-1"
# the switch port facing H-5, from the net file
read -r sw swp < <(awk '/^Switch/ { gsub(/"/, "", $3); s = $3 }
	/^\[[0-9]+\][ \t]+"H-5"\[1\]/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print s, $1; exit }' "$net")
[ -n "$sw" ] || fail "no switch port facing H-5 in $net"

for h in H-1 H-2 H-3; do
	on_host_bg "$h" "$LISTEN" --trap 68,69 --check-interval 1 --timeout 60 \
		>"$SIM_TMP/$h.out" 2>"$SIM_TMP/$h.err"
	echo "$SIM_LAST_PID" >"$SIM_TMP/$h.pid"
done
for h in H-1 H-2 H-3; do
	wait_until 20 grep -q 'subscribed with the SM' "$SIM_TMP/$h.err" ||
		fail "$h's listener did not subscribe: $(tail -n 3 "$SIM_TMP/$h.err")"
done
sl_to() {	# SL of the PathRecord from H-1 to H-5 (saquery, asked at H-1)
	on_host H-1 saquery -p --slid "$l1" --dlid "$l5" 2>&1 |
		sed -n 's/^\s*sl\.\+\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1
}
[ "$(( $(sl_to) ))" = 0 ] || fail "before: saquery -p H-1 -> H-5 SL $(sl_to), not 0"
sets0=$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["mads"]["sets"])')

# the ramp: the counters follow the clock (the console's commands take
# their time): 4X SDR carries 10^9 octets a second, 0.3 of it 75,000,000
# double words a second, 0.7 175,000,000.  A step late by a fraction f of
# the 2 s interval lowers both rates of a port by f: H-5's switch port at
# 400,000 ticks a second stays a hot-spot up to f = 0.75; H-1 and H-2 at
# 200,000 qualify up to f = 0.5; H-3 at 130,000 is over the threshold
# only while f < 0.23 and below 0.5 of its link only when f > 0.28, so
# no lateness makes it a contributor.
# sim_batch CMD...: the console commands written at once, then their prompts
# awaited: the counters move together, and a step costs one wait.
sim_batch() {
	local before
	before=$(sim__prompts)
	printf '%s\n' "$@" >&"$SIM_FD"
	wait_until "$SIM_CMD_TIMEOUT" sim__prompted "$((before + $# - 1))" ||
		fail "sim_batch: no answer to $# commands"
}
ramp() {
	local t0 ms
	t0=$(date +%s%3N)
	while [ ! -e "$SIM_TMP/stop" ]; do
		ms=$(( $(date +%s%3N) - t0 ))
		sim_batch "PerformanceSet \"$sw\"[$swp] PortCounters.PortXmitWait=$((ms * 400))" \
			"PerformanceSet \"H-1\"[1] PortCounters.PortXmitWait=$((ms * 200))" \
			"PerformanceSet \"H-2\"[1] PortCounters.PortXmitWait=$((ms * 200))" \
			"PerformanceSet \"H-3\"[1] PortCounters.PortXmitWait=$((ms * 130))" \
			"PerformanceSet \"H-1\"[1] PortCountersExtended.PortXmitData=$((ms * 75000))" \
			"PerformanceSet \"H-2\"[1] PortCountersExtended.PortXmitData=$((ms * 75000))" \
			"PerformanceSet \"H-3\"[1] PortCountersExtended.PortXmitData=$((ms * 175000))" \
			>/dev/null
		sleep 0.05
	done
}
ramp &
rampid=$!
bg_register "$rampid"
lanes() { python3 - "$SIM_TMP/$1.out" "$2" <<'PY'
import json, sys
n = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(sum(1 for x in n if x.get("lane") and x["trap"] == int(sys.argv[2])))
PY
}
wait_until 10 eval '[ "$(lanes H-1 69)" = 1 ] && [ "$(lanes H-2 69)" = 1 ]' ||
	fail "no repath to H-1 and H-2: $(grep dftree "$log" | tail -n 4)"
sleep 4.5	# two more intervals: nothing repeated, nothing to H-3
python3 - "$SIM_TMP" "$l5" <<'PY' || fail "the repaths: $(cat "$SIM_TMP"/H-*.out)"
import json, sys
d, hot = sys.argv[1], int(sys.argv[2])
for h, want in (("H-1", 1), ("H-2", 1), ("H-3", 0)):
    n = [json.loads(l) for l in open("%s/%s.out" % (d, h)) if l.strip()]
    rep = [x for x in n if x.get("lane") and x["trap"] == 69]
    assert len(rep) == want and len(n) == want, (h, n)
    for x in rep:
        assert x["dlid"] == hot and x["sl"] == 1, x
print("repaths:", "H-1 H-2")
PY
grep -q "dftree: hot-spot H-5 (LID $l5" "$log" || fail "no log line for the hot-spot: $(grep dftree "$log")"
[ "$(( $(sl_to) ))" = 1 ] || fail "during: saquery -p H-1 -> H-5 SL $(sl_to), not the slow 1"
ctl --json hotspots >"$SIM_TMP/hs.json" || fail "ibsmctl hotspots: $(cat "$SIM_TMP/hs.json")"
python3 - "$SIM_TMP/hs.json" "$l5" <<'PY' || fail "ibsmctl hotspots: $(cat "$SIM_TMP/hs.json")"
import json, sys
h = json.load(open(sys.argv[1]))["hotspots"]
assert len(h) == 1 and h[0]["lid"] == int(sys.argv[2]) and h[0]["node"] == "H-5", h
assert sorted(c["node"] for c in h[0]["contributors"]) == ["H-1", "H-2"], h
PY
pass "hot-spot H-5 (LID $l5): one 69 with SL 1 each to H-1 and H-2, none to H-3 (utilisation 0.7); saquery -p answers SL 1; ibsmctl hotspots lists it"

touch "$SIM_TMP/stop"
wait "$rampid" 2>/dev/null
wait_until 8 eval '[ "$(lanes H-1 68)" = 1 ] && [ "$(lanes H-2 68)" = 1 ]' ||
	fail "no unpath after the ramp stopped: $(grep dftree "$log" | tail -n 4)"
sleep 4.5
python3 - "$SIM_TMP" "$l5" <<'PY' || fail "the unpaths: $(cat "$SIM_TMP"/H-*.out)"
import json, sys
d, hot = sys.argv[1], int(sys.argv[2])
for h, want in (("H-1", 1), ("H-2", 1), ("H-3", 0)):
    n = [json.loads(l) for l in open("%s/%s.out" % (d, h)) if l.strip()]
    un = [x for x in n if x.get("lane") and x["trap"] == 68]
    assert len(un) == want, (h, n)
    for x in un:
        assert x["dlid"] == hot and x["sl"] == 0, x
PY
[ "$(( $(sl_to) ))" = 0 ] || fail "after: saquery -p H-1 -> H-5 SL $(sl_to), not 0"
sets1=$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["mads"]["sets"])')
[ "$sets1" = "$sets0" ] || fail "the SM sent $((sets1 - sets0)) Sets during the hot-spot"
pass "the ramp stopped: one 68 with SL 0 each to H-1 and H-2; saquery -p answers SL 0 again; no Set sent ($sets0 before, $sets1 after)"
for h in H-1 H-2 H-3; do kill "$(cat "$SIM_TMP/$h.pid")" 2>/dev/null; done
