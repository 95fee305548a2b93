#!/bin/bash
# Notices end to end under ibsim: ibsmd as a daemon, ibsm-listen on two
# hosts (under ibsim the listener claims IsSM itself, after its agents are
# registered: ibsim delivers an unsolicited MAD only to a client that claims
# IsSM, and SIM_SET_ISSM=1 claims it too early -- see DEVELOPERS.md).  Unlink of a third host's cable -> both listeners print
# a trap-65 line naming that host's GID; ReLink and the next sweep -> 64.
# The time from the Unlink to the listener's line is measured, and the
# time from the trap 128 in to the Reports out in ibsmd's log: the 65 goes
# out once the switch's PortInfo shows the port Down, before the heavy
# sweep, which then must not send it again.
. "$(dirname "$0")/common.sh"

# The issue's fabric: a 2-level tree of 36-port switches, 324 hosts.
net="$SIM_TMP/tree.net"
gen ${NOTICES_GEN:-ftree2 --radix 36} -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
lines() { grep -c "\"trap\":$2" "$SIM_TMP/$1.out" 2>/dev/null || true; }
has() { [ "$(lines "$1" "$2")" -ge "$3" ]; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 30 "$log"
# H-1 runs --exec for each notice; H-5 stops after --count 2
on_host_bg H-1 "$LISTEN" --trap 64,65 --check-interval 1 \
	--exec 'echo "$IBSM_TRAP $IBSM_GID $IBSM_ISSUER_LID" >>'"$SIM_TMP/exec.out" \
	>"$SIM_TMP/H-1.out" 2>"$SIM_TMP/H-1.err"
on_host_bg H-5 "$LISTEN" --trap 64,65 --check-interval 1 --count 2 --timeout 60 \
	>"$SIM_TMP/H-5.out" 2>"$SIM_TMP/H-5.err"
counted=$SIM_LAST_PID
subscribed() { grep -q 'subscribed with the SM' "$SIM_TMP/$1.err"; }
wait_until 20 subscribed H-1 && wait_until 20 subscribed H-5 ||
	fail "listeners did not subscribe: $(tail -n 3 "$SIM_TMP/H-1.err") / $(tail -n 3 "$SIM_TMP/H-5.err")"
# ibsmctl subscribers: both listeners, traps 64 and 65 each
"$IBSMCTL" -s "$sock" --json subscribers | python3 -c '
import json, sys
d = json.load(sys.stdin)
traps = sorted((s["subscriber_gid"], s["trap"]) for s in d["subscriptions"])
assert d["count"] == 4 and len({g for g, t in traps}) == 2 and [t for g, t in traps] == [64, 65, 64, 65], d' ||
	fail "ibsmctl subscribers: $("$IBSMCTL" -s "$sock" subscribers 2>&1)"
# ... and status counts the SA requests that made them (4 Sets, and the listeners' checks)
"$IBSMCTL" -s "$sock" --json status | python3 -c '
import json, sys
sa = json.load(sys.stdin)["sa"]
assert sa["requests"] >= 4 and sa["answered"] >= 4 and sa["errors"] == 0, sa' ||
	fail "ibsmctl status sa: $("$IBSMCTL" -s "$sock" --json status)"
pass "two listeners subscribed (ibsmctl subscribers lists their four subscriptions)"

gid=$(printf 'fe80::2:c902:0:%x' $(($(host_guid H-7) & 0xffffffff)))	# H-7's port GID
n=$(sweeps)
t0=$(date +%s.%N)
sim_cmd 'Unlink "H-7"[1]' >/dev/null
wait_until 10 has H-1 65 1 && wait_until 10 has H-5 65 1 ||
	fail "no trap 65 at the listeners: $(tail -n 3 "$log")"
for h in H-1 H-5; do
	grep '"trap":65' "$SIM_TMP/$h.out" | grep -q "\"gid\":\"$gid\"" ||
		fail "$h: trap 65 does not name $gid: $(cat "$SIM_TMP/$h.out")"
done
t65=$(grep '"trap":65' "$SIM_TMP/H-1.out" | head -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
ms=$(python3 -c "print(round(($t65 - $t0) * 1000))")
# from ibsmd's log: the trap 128 in, the Reports of the 65 out
in_ms=$(grep -m1 'trap 128 from' "$log" | cut -d' ' -f1)
out_ms=$(grep -m1 'notice 65: ' "$log" | cut -d' ' -f1)
# the log's stamps are ISO 8601 with milliseconds and the zone (ibsmd(8))
d=$(python3 -c '
import sys
from datetime import datetime
def ms(t):
    return datetime.fromisoformat(t).timestamp() * 1000
print(round(ms(sys.argv[2]) - ms(sys.argv[1])))' "$in_ms" "$out_ms") ||
	fail "the log stamps of the trap 128 ('"'"'$in_ms'"'"') and the notice 65 ('"'"'$out_ms'"'"') do not parse"
[ "$d" -ge 0 ] || fail "the notice 65 logged before the trap 128: $in_ms, $out_ms"
pass "Unlink H-7: trap 65 naming $gid at both listeners, ${ms} ms after the Unlink; trap 128 in to Reports out ${d} ms (ibsmd's log)"

sim_cmd 'ReLink "H-7"[1]' >/dev/null 2>&1 || sim_cmd 'Link "H-7"[1]' >/dev/null
wait_until 20 has H-1 64 1 && wait_until 20 has H-5 64 1 ||
	fail "no trap 64 after the ReLink: $(tail -n 3 "$log")"
grep '"trap":64' "$SIM_TMP/H-1.out" | grep -q "\"gid\":\"$gid\"" || fail "trap 64 does not name $gid"
# the 65 went out on the trap, before the Unlink's heavy sweep, which must
# not send it again: that sweep ended before the ReLink's, whose 64 is in
sleep 0.5
for h in H-1 H-5; do
	[ "$(lines "$h" 65)" -eq 1 ] && [ "$(lines "$h" 64)" -eq 1 ] ||
		fail "$h: $(lines "$h" 65) trap 65 and $(lines "$h" 64) trap 64 lines, want one each: $(cat "$SIM_TMP/$h.out")"
done
pass "ReLink H-7: trap 64 naming $gid at both listeners; one 65 and one 64 each"

# --exec ran once per notice with the fields in its environment; --count 2: exit 0
issuer=$(grep -m1 '"trap":65' "$SIM_TMP/H-1.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["issuer_lid"])')
wait_until 5 test -s "$SIM_TMP/exec.out"
printf '65 %s %s\n64 %s %s\n' "$gid" "$issuer" "$gid" "$issuer" | cmp -s - "$SIM_TMP/exec.out" ||
	fail "--exec: $(cat "$SIM_TMP/exec.out")"
wait_pid "$counted" 5 || fail "--count 2: the listener is still running"
wait "$counted"; rc=$?
[ "$rc" -eq 0 ] || fail "--count 2: exit $rc"
# --timeout with nothing to receive: exit 1
rc=0; on_host H-9 "$LISTEN" --trap 66 --timeout 1 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--timeout 1 with no notice: exit $rc"
pass "--exec ran once per notice with IBSM_TRAP, IBSM_GID, IBSM_ISSUER_LID; --count 2 exits 0; --timeout exits 1"

# ---- OpenSM on a fresh ibsim of the same fabric: the same Unlink, its 65 ----
# ibsmd's 65 must carry what OpenSM's carries (generic, type, producer, the
# GID); the time from the Unlink to the listener's line is reported beside.
ibsmd_ms=$ms
for p in "${SIM_BG_PIDS[@]}"; do sim__stop_pid "$p"; done	# the daemon, the listeners
sim_stop
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-0 opensm -F "$SIM_TMP/osm/opensm.conf" -f "$SIM_TMP/osm/opensm.log" \
	>"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
on_host_bg H-1 "$LISTEN" --trap 65 --count 1 --timeout 30 >"$SIM_TMP/osm.out" 2>"$SIM_TMP/osm.err"
osm_listener=$SIM_LAST_PID
wait_until 20 grep -q 'subscribed with the SM' "$SIM_TMP/osm.err" ||
	fail "ibsm-listen did not subscribe with OpenSM: $(cat "$SIM_TMP/osm.err")"
t0=$(date +%s.%N)
sim_cmd 'Unlink "H-7"[1]' >/dev/null
wait_pid "$osm_listener" 30 || fail "no trap 65 from OpenSM"
python3 - "$SIM_TMP/H-1.out" "$SIM_TMP/osm.out" <<'PY' || fail "ibsmd's 65 differs from OpenSM's"
import json, sys
def first65(path):
    for line in open(path):
        n = json.loads(line)
        if n["trap"] == 65:
            return n
    sys.exit("no trap 65 in " + path)
a, b = first65(sys.argv[1]), first65(sys.argv[2])
for k in ("trap", "generic", "type", "producer_type", "gid"):
    if a[k] != b[k]:
        sys.exit("%s: ibsmd %r, OpenSM %r" % (k, a[k], b[k]))
PY
t65=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["time"])' "$SIM_TMP/osm.out")
osm_ms=$(python3 -c "print(round(($t65 - $t0) * 1000))")
pass "OpenSM's 65 for the same Unlink: the same trap, type, producer and GID; Unlink to the listener's line: ibsmd ${ibsmd_ms} ms, OpenSM ${osm_ms} ms"
