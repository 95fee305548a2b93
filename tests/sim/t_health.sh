#!/bin/bash
# Fabric health under ibsim (ibsmd(8) PERFORMANCE MANAGER): the demo
# fabric with L0-S1[2] -- H-4[1] trained at 1X in the net file
# (DEVELOPERS.md).  `ibsmctl --json health` lists that link degraded (as
# smpquery reads it); a LinkDownedCounter that climbs 5 times in 3
# intervals (below its hourly threshold of 10) makes its port flapping;
# after `ibsmctl health --save-baseline`, a cable unlinked from ibsim's
# console is listed missing against the baseline, the saved file reads as
# ibnetdiscover output.  Interval 1 s.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/h.net"
sed -e 's/^\[2\]\t"H-4"\[1\]$/[2]\t"H-4"[1]\t\t# "H-4" lid 0 4xSDR/' \
    -e '/^Hca\t1 "H-4"$/{n;s/^\[1\]\t"L0-S1"\[2\]$/[1]\t"L0-S1"[2]\t\t# lid 0 lmc 0 "L0-S1" lid 0 1xSDR/}' \
	"$SIM_ROOT/etc/demo.net" >"$net"
grep -q '"L0-S1" lid 0 1xSDR' "$net" || fail "could not set L0-S1[2] -- H-4[1] to 1X in the net file"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
pol="$SIM_TMP/policy.yaml"
printf 'perfmgr:\n  interval_s: 1\n' >"$pol"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
pm_sweeps() { grep -c 'perfmgr: sweep of' "$log"; }
next_sweeps() {
	local want=$(( $(pm_sweeps) + $1 ))
	wait_until 4 eval "[ \"\$(pm_sweeps)\" -ge $want ]" || fail "$1 more perfmgr sweeps did not come: $(grep perfmgr "$log" | tail -n 2)"
}

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 20 "$log"
next_sweeps 1

ctl --json health >"$SIM_TMP/h0.json" || fail "ibsmctl health: $(cat "$SIM_TMP/h0.json")"
python3 - "$SIM_TMP/h0.json" <<'EOF' || fail "degraded: $(cat "$SIM_TMP/h0.json")"
import json, sys
h = json.load(open(sys.argv[1]))
d = h["degraded"]
ends = {(x["node"], x["port"], x["remote_node"], x["remote_port"]) for x in d}
assert len(d) == 1 and ends & {("L0-S1", 2, "H-4", 1), ("H-4", 1, "L0-S1", 2)}, d
assert d[0]["width_active"] < d[0]["width_max"] or d[0]["width_active"] == 1, d
assert h["unhealthy"] == [], h["unhealthy"]
EOF
pass "the 1X link L0-S1[2] -- H-4[1] is listed degraded"

# LinkDowned: +2, +2, +1 over three intervals (5 in 3, under 10 an hour)
for v in 2 4 5; do
	sim_cmd "PerformanceSet \"L0-S2\"[1] PortCounters.LinkDownedCounter=$v" >/dev/null
	next_sweeps 1
done
ctl --json health >"$SIM_TMP/h1.json"
python3 - "$SIM_TMP/h1.json" <<'EOF' || fail "flapping: $(cat "$SIM_TMP/h1.json")"
import json, sys
h = json.load(open(sys.argv[1]))
f = [(x["node"], x["port"]) for x in h["flapping"]]
assert f == [("L0-S2", 1)], f
assert any("flapping" in r for r in h["flapping"][0]["reasons"]), h["flapping"][0]
EOF
grep -q 'perfmgr: L0-S2 port 1 .*unhealthy: .*flapping' "$log" || fail "no log line: $(grep unhealthy "$log")"
pass "LinkDownedCounter +5 in 3 intervals: L0-S2[1] flapping ($(grep -m1 'L0-S2 port 1' "$log" | sed 's/.*unhealthy: //'))"

# the baseline, then a cable pulled
out=$(ctl --json health --save-baseline) || fail "save-baseline: $out"
base="$SIM_TMP/state/baseline"
[ -s "$base" ] && grep -q '^Switch' "$base" || fail "no baseline in ibnetdiscover's format: $out"
[ "$(grep -c '^Switch' "$base")" = 6 ] && [ "$(grep -c '^Ca' "$base")" = 12 ] ||
	fail "the baseline holds $(grep -c '^Switch' "$base") switches, $(grep -c '^Ca' "$base") CAs"
n=$(sweeps)
sim_cmd 'Unlink "L1-S1"[3]' >/dev/null
wait_until 15 more_sweeps_than "$n" || fail "no heavy sweep after the unlink"
ctl --json health >"$SIM_TMP/h2.json"
python3 - "$SIM_TMP/h2.json" <<'EOF' || fail "baseline: $(cat "$SIM_TMP/h2.json")"
import json, sys
h = json.load(open(sys.argv[1]))
m = h["baseline"]["missing"]
links = [x for x in m if x["kind"] == "link"]
ends = [{(x["a"]["node"], x["a"]["port"]), (x["b"]["node"], x["b"]["port"])} for x in links]
assert len(links) == 1 and ("L1-S1", 3) in ends[0], m
assert h["baseline"]["extra"] == [], h["baseline"]
EOF
pass "after --save-baseline, the unlinked cable L1-S1[3] is listed missing"
