#!/bin/bash
# Failed and degraded links in plain sight.  The demo fabric with the link
# L0-S1[2] -- H-4[1] set to 1X SDR in the net file (ibnetdiscover's comment
# form on the switch's line, DEVELOPERS.md): infiniband-diags (smpquery
# portinfo, ibnetdiscover) show it at 1X, and ibsmctl topology --json lists
# it "degraded", status counts it, the log names it once.  Then Unlink of a
# leaf-spine link: topology --json lists it "failed" (failed_links 1), the
# text says FAILED, the DOT has one dashed edge, and `ibsmctl forget LINK`
# removes it (0 failed after, a second forget refused).
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/links.net"
# H-4's port: enabled for 1X SDR only; switch L0-S1's port 2 facing it:
# 1X and 4X (ibsim trains a link at the widest width both ends enable and
# exits when they share none)
sed -e 's/^\[2\]\t"H-4"\[1\]$/[2]\t"H-4"[1]\t\t# "H-4" lid 0 4xSDR/' \
    -e '/^Hca\t1 "H-4"$/{n;s/^\[1\]\t"L0-S1"\[2\]$/[1]\t"L0-S1"[2]\t\t# lid 0 lmc 0 "L0-S1" lid 0 1xSDR/}' \
	"$SIM_ROOT/etc/demo.net" >"$net"
grep -q '"H-4" lid 0 4xSDR' "$net" && grep -q '"L0-S1" lid 0 1xSDR' "$net" ||
	fail "could not set L0-S1[2] -- H-4[1] to 1X in the net file"

sim_start "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
wait_up 20 "$log" "from the daemon"

# infiniband-diags' view: the link trained at 1X
sim_dump "$SIM_TMP/up" || fail "infiniband-diags: $(tail -n 3 "$SIM_TMP/up.err")"
grep -E '^\[2\].*"H-4"' "$SIM_TMP/up.topo" | grep -q '1xSDR' ||
	fail "ibnetdiscover does not show L0-S1[2] at 1X: $(grep -E '"H-4"' "$SIM_TMP/up.topo")"
l0s1=$(awk '/^Switch/ && /"L0-S1"/ { for (i = 1; i <= NF; i++) if ($i ~ /^lid$/) { print $(i + 1); exit } }' "$SIM_TMP/up.topo")
[ -n "$l0s1" ] || fail "no LID of L0-S1 in ibnetdiscover's output"
on_host H-0 smpquery portinfo "$l0s1" 2 >"$SIM_TMP/pi.txt" 2>&1 || fail "smpquery portinfo $l0s1 2: $(cat "$SIM_TMP/pi.txt")"
grep -Eq '^LinkWidthActive:\.+1X' "$SIM_TMP/pi.txt" && grep -Eq '^LinkSpeedActive:\.+2\.5 Gbps' "$SIM_TMP/pi.txt" ||
	fail "smpquery portinfo: L0-S1[2] not at 1X SDR: $(grep -E 'LinkWidth|LinkSpeed' "$SIM_TMP/pi.txt")"

ctl --json topology >"$SIM_TMP/deg.json" || fail "ibsmctl --json topology: $(cat "$SIM_TMP/deg.json")"
python3 - "$SIM_TMP/deg.json" <<'EOF' || fail "ibsmctl --json topology: the 1X link not listed degraded"
import json, sys
d = json.load(open(sys.argv[1]))
deg = [l for l in d["links"] if l["state"] == "degraded"]
assert d["degraded_links"] == 1 and len(deg) == 1, (d["degraded_links"], deg)
ends = {(deg[0]["a"]["desc"], deg[0]["a"]["port"]), (deg[0]["b"]["desc"], deg[0]["b"]["port"])}
assert ends == {("L0-S1", 2), ("H-4", 1)}, ends
assert deg[0]["rate"] == {"width": "1x", "speed": "SDR"}, deg[0]["rate"]
assert deg[0]["could_be"]["width"] != "1x", deg[0]["could_be"]
assert all(l["state"] == "active" for l in d["links"] if l is not deg[0])
assert d["failed_links"] == 0
EOF
[ "$(status_field "$sock" degraded_links)" = 1 ] || fail "status: degraded_links $(status_field "$sock" degraded_links), not 1"
ctl metrics | grep -q '^ibsmd_degraded_links 1$' || fail "metrics: no ibsmd_degraded_links 1"
n=$(sweeps)
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after ibsmctl sweep --heavy"
said=$(grep -c 'link degraded: "L0-S1" port 2' "$log")
[ "$said" = 1 ] || fail "the degraded link named $said times in the log over 2 heavy sweeps, not once"
pass "L0-S1[2] -- H-4[1] at 1X SDR (ibnetdiscover, smpquery portinfo): topology degraded, status and metrics 1, named once in the log: $(grep -o 'link degraded: .*' "$log")"

n=$(sweeps)
sim_cmd 'Unlink "L0-S2"[4]' >/dev/null
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after Unlink of L0-S2[4]"
ctl --json topology >"$SIM_TMP/failed.json" || fail "ibsmctl --json topology after Unlink"
python3 - "$SIM_TMP/failed.json" <<'EOF' || fail "ibsmctl --json topology after Unlink: L0-S2[4] not listed failed"
import json, sys
d = json.load(open(sys.argv[1]))
failed = [l for l in d["links"] if l["state"] == "failed"]
assert d["failed_links"] == 1 and len(failed) == 1, (d["failed_links"], failed)
ends = {failed[0]["a"]["desc"], failed[0]["b"]["desc"]}
assert ends == {"L0-S2", "L1-S0"}, ends
assert failed[0]["failed"] is True and failed[0]["since"].endswith("Z")
assert d["n_links"] == 20, d["n_links"]
EOF
out=$(ctl topology) || fail "ibsmctl topology: $out"
grep -q '^6 switches, 12 hosts, 20 links (1 failed, 1 degraded)' <<<"$out" ||
	fail "ibsmctl topology header: $(head -n 1 <<<"$out")"
grep -Eq '^  "L0-S2"\[4\] -- "L1-S0"\[3\] FAILED \(lost [0-9T:Z-]+\)$|^  "L1-S0"\[3\] -- "L0-S2"\[4\] FAILED \(lost [0-9T:Z-]+\)$' <<<"$out" ||
	fail "ibsmctl topology: no FAILED line for L0-S2[4]: $(grep 'FAILED' <<<"$out")"
ctl topology --dot >"$SIM_TMP/failed.dot" || fail "ibsmctl topology --dot"
dashed=$(grep -c 'style=dashed' "$SIM_TMP/failed.dot")
[ "$dashed" = 1 ] || fail "the DOT has $dashed dashed edges, not 1"
[ "$(status_field "$sock" failed_links)" = 1 ] || fail "status: failed_links $(status_field "$sock" failed_links), not 1"
pass "Unlink L0-S2[4]: listed failed in --json (20 links, 1 failed), FAILED in the text, one dashed edge in the DOT, status 1"

# a light sweep or a heavy one does not drop it: it stays until forgotten
n=$(sweeps)
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after ibsmctl sweep --heavy"
[ "$(ctl --json topology | python3 -c 'import json,sys; print(json.load(sys.stdin)["failed_links"])')" = 1 ] ||
	fail "the failed link was dropped by the next heavy sweep"
out=$(ctl forget 'L0-S2[4]' 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "ibsmctl forget L0-S2[4]: exit $rc ($out)"
ctl --json topology >"$SIM_TMP/forgot.json" || fail "ibsmctl --json topology after forget"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["failed_links"] == 0 and d["n_links"] == 19, (d["failed_links"], d["n_links"])
assert not any(l["state"] == "failed" for l in d["links"])
' "$SIM_TMP/forgot.json" || fail "after forget: the link still listed"
[ "$(ctl topology --dot | grep -c 'style=dashed')" = 0 ] || fail "after forget: a dashed edge in the DOT"
out=$(ctl --json forget 'L0-S2[4]' 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import json, sys; assert "no failed link" in json.loads(sys.argv[1])["error"]' "$out" ||
	fail "a second forget: exit $rc ($out)"
pass "forget L0-S2[4]: 19 links, 0 failed, no dashed edge; a second forget refused"
