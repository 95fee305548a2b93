#!/bin/bash
# dor under ibsim, judged with infiniband-diags: a 4x3 torus (fabgen's
# cabling: ports 2d+1, 2d+2 in dimension d), then the same with one x
# cable pulled (ibsim Unlink):
#  - the daemon routes with dor: every CA reaches every LID, no loop
#    (check_fabric.py), on shortest paths in dimension order on the whole
#    torus (the x ports taken first: a route's first switch-to-switch hop
#    leaves by port 1 or 2 whenever the x coordinates differ);
#  - saquery -p from every host's LID to every LID: the SLs (the
#    datelines crossed); smpquery sl2vl on every switch: each switch port
#    of dimension d sends SL s on VL bit d of s, the others on VL 0;
#    cdg_check.py --sls --sl2vl: no cycle over (link, VL), one on VL0
#    without the SLs; the SLs are the offline run's;
#  - one x cable pulled: the next heavy sweep routes the long way round
#    that ring, still every CA to every LID, still no cycle.
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"
. "$SIM_ROOT/tests/sim/vlroute_lib.sh"
CDG="$SIM_ROOT/tests/sim/cdg_check.py"
net="$SIM_TMP/torus.net"
gen torus --dims 4,3 -o "$net"
"$IBSMD" --offline "$net" -R dor --verify --dump-sls "$SIM_TMP/off-sls" >"$SIM_TMP/off" 2>&1 ||
	fail "offline: $(tail -n 3 "$SIM_TMP/off")"
grep -q '^vls: used=2$' "$SIM_TMP/off" || fail "offline: $(grep '^vls' "$SIM_TMP/off")"

sim_start "$net"
sock="$SIM_TMP/sock"
on_host_bg H-0 "$IBSMD" -R dor -S "$SIM_TMP/state" -s "$sock" --log-level info >"$SIM_TMP/log" 2>&1
pid=$SIM_LAST_PID
wait_up 30 "$SIM_TMP/log"
grep -q 'routing=dor ' "$SIM_TMP/log" || fail "$(grep '^subnet up' "$SIM_TMP/log")"
check_up "$SIM_TMP/t"
sls "$SIM_TMP/t" "$SIM_TMP/off-sls"
sl2vl_dump "$SIM_TMP/t"
vl_cdg "$SIM_TMP/t" || fail "$(cat "$SIM_TMP/t.cdg")"
python3 "$CDG" --topo "$SIM_TMP/t.topo" --lfts "$SIM_TMP/t.lfts" >/dev/null &&
	fail "no cycle on one VL: the torus's rings need the datelines"
same_sls "$SIM_TMP/t" "$SIM_TMP/off-sls" || fail "the daemon's PathRecord SLs are not the offline run's"
# the tables: port p of a switch, cabled to a switch, in dimension (p-1)/2
python3 - "$SIM_TMP/t.topo" "$SIM_TMP/t.sl2vl" <<'PY' || fail "SL2VL tables not the datelines'"
import os, re, sys
row = re.compile(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)$')
sw = re.compile(r'^Switch\s+(\d+)\s.*\blid (\d+) ')
link = re.compile(r'^\[(\d+)\]\s+"S-')
lid, linked, bad, n = None, {}, [], 0
for line in open(sys.argv[1]):
    m = sw.match(line)
    if m:
        lid = int(m.group(2))
        linked[lid] = set()
        continue
    m = link.match(line)
    if m and lid is not None:
        linked[lid].add(int(m.group(1)))
    if not line.strip():
        lid = None
for lid, ports in linked.items():
    for line in open(os.path.join(sys.argv[2], "sl2vl.%d" % lid)):
        m = row.match(line)
        if not m:
            continue
        i, o = int(m.group(1)), int(m.group(2))
        if i == o:
            continue
        vls = [int(v) for v in m.group(3).split("|") if v.strip()]
        want = [(s >> ((o - 1) // 2)) & 1 if o in ports else 0 for s in range(16)]
        n += 1
        if vls != want:
            bad.append("LID %d in %d out %d: %s, want %s" % (lid, i, o, vls, want))
print("\n".join(bad[:5]))
sys.exit(1 if bad or not n else 0)
PY
# dimension order: x first wherever the x coordinates differ (fabgen's
# switch L0-S<i> is at x = i % 4, y = i / 4)
python3 - "$SIM_ROOT/tests/sim" "$SIM_TMP/t.topo" "$SIM_TMP/t.lfts" <<'PY' || fail "not dimension order"
import sys
sys.path.insert(0, sys.argv[1])
from check_fabric import parse_lfts, parse_topo
topo, lfts = parse_topo(sys.argv[2]), parse_lfts(sys.argv[3])
name = {g: n["desc"] for g, n in topo.nodes.items()}
where = {g: int(d.split("-S")[1]) for g, d in name.items() if d.startswith("L0-S")}
owner = {}
for base, lmc, g, p in topo.lids:
    owner[base] = (g, p)
checked = 0
for s, row in lfts.items():
    for lid, port in row.items():
        g, p = owner.get(lid, (None, None))
        if g is None or port in (0, 255):
            continue
        d = topo.links.get((g, p), (g, 0))[0] if g not in where else g
        if d not in where or d == s:
            continue
        xs, xd = where[s] % 4, where[d] % 4
        far = topo.links.get((s, port))
        if far is None or far[0] not in where:
            continue
        checked += 1
        if xs != xd and port not in (1, 2):
            print("%s -> LID %d (%s): port %d before x is done" % (name[s], lid, name[d], port))
            sys.exit(1)
        if xs == xd and port in (1, 2):
            print("%s -> LID %d (%s): x port %d with x done" % (name[s], lid, name[d], port))
            sys.exit(1)
if not checked:
    sys.exit(1)
PY
pass "4x3 torus: dor on 2 VLs: every CA reaches every LID, x before y; $(cut -d: -f2- "$SIM_TMP/t.cdg" | sed 's/^ //'); one VL would cycle; the SL2VL tables send SL s on VL bit d of s out of dimension d's ports; the PathRecord SLs are the offline run's"

# one x cable pulled: L0-S1 port 1 (+x) to L0-S2
sim_cmd 'Unlink "L0-S1"[1]' >/dev/null || fail "ibsim Unlink"
wait_until 30 eval '[ "$(grep -c "^subnet up" "$SIM_TMP/log")" -ge 2 ]' ||
	fail "no heavy sweep after the Unlink: $(tail -n 3 "$SIM_TMP/log")"
sleep 1
check_up "$SIM_TMP/u"
rm -f "$SIM_TMP"/u.sl.*
sls "$SIM_TMP/u" "$SIM_TMP/off-sls"
sl2vl_dump "$SIM_TMP/u"
vl_cdg "$SIM_TMP/u" || fail "after the Unlink: $(cat "$SIM_TMP/u.cdg")"
grep -q 'dor recomputes\|full reroute' "$SIM_TMP/log" || fail "no full reroute logged: $(grep -i 'route' "$SIM_TMP/log" | tail -n 3)"
kill "$pid"
wait_pid "$pid" 10 || fail "ibsmd did not stop"
pass "L0-S1 +x cable pulled: routed again, the long way round its ring: every CA reaches every LID; $(cut -d: -f2- "$SIM_TMP/u.cdg" | sed 's/^ //')"
