#!/bin/bash
# The host's end of the hot-spot lane orders (ibsmd(8) NOTICES, ibsm-listen(8)
# "Lane orders") under ibsim: ibsmd runs the subnet; ibsm-listen on H-1
# subscribes to 68 and 69 and runs the sample agent etc/ibsm-lanes.sh per
# notice (--exec, with a site hook that records its arguments); a stand-in
# for the SM on H-2 (madsend report) sends H-1 the documented bytes of a 69
# lane order (H-3's LIDs to the slow SL 1), then of a 68 (back to the fast
# SL 0).  Each is one JSON line with "lane", "slid", "dlid", "lmc" and "sl"
# and no path field; --exec gets IBSM_LANE, IBSM_SLID, IBSM_DLID, IBSM_LMC
# and IBSM_SL; the agent runs the hook as DLID LMC SL; --count 2 exits 0.
. "$(dirname "$0")/common.sh"

sim_start "$SIM_ROOT/etc/demo.net"
log="$SIM_TMP/daemon.log"
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/ibsmd.sock" --log-level info >"$log" 2>&1
wait_up 30 "$log"
lid_of() { on_host "$1" smpquery -D portinfo 0 | sed -n 's/^Lid:\.*//p'; }
l1=$(lid_of H-1) l2=$(lid_of H-2) l3=$(lid_of H-3)
[ -n "$l1" ] && [ -n "$l2" ] && [ -n "$l3" ] || fail "smpquery: LIDs of H-1..3 '$l1' '$l2' '$l3'"

printf '#!/bin/sh\necho "$*" >>"%s"\n' "$SIM_TMP/hook.out" >"$SIM_TMP/hook"
chmod +x "$SIM_TMP/hook"
export IBSM_LANES_HOOK="$SIM_TMP/hook"
on_host_bg H-1 "$LISTEN" --trap 68,69 --check-interval 1 --count 2 --timeout 40 \
	--exec 'env | grep "^IBSM_" | sort >"'"$SIM_TMP"'/env.$IBSM_TRAP"; exec '"$SIM_ROOT/etc/ibsm-lanes.sh" \
	>"$SIM_TMP/H-1.out" 2>"$SIM_TMP/H-1.err"
listener=$SIM_LAST_PID
wait_until 20 grep -q 'subscribed with the SM' "$SIM_TMP/H-1.err" ||
	fail "the listener did not subscribe: $(tail -n 3 "$SIM_TMP/H-1.err")"

# lane TRAP SL: a lane order to H-1 about H-3's port (LMC 0), issued by H-2:
# the 80 bytes of the Notice as ibsmd(8) lays them out, in hex
lane() {
	python3 - "$1" "$l2" "$l1" "$l3" 0 "$2" <<'PY'
import struct, sys
trap, issuer, slid, dlid, lmc, sl = map(int, sys.argv[1:])
data = bytes([0x10, sl, 0, 0, 0, 0, 0, lmc]) + struct.pack(">II", slid, dlid)
head = bytes([0x83, 0, 0, 4]) + struct.pack(">HHH", trap, issuer, 0)
print((head + data + bytes(54 - len(data)) + bytes(16)).hex())
PY
}
lines() { [ "$(wc -l 2>/dev/null <"$SIM_TMP/$1" || echo 0)" -ge "$2" ]; }
out=$(on_host H-2 "$SIM_ROOT/build/madsend" report "$l1" "$(lane 69 1)") || fail "madsend report 69: $out"
wait_until 5 lines H-1.out 1 || fail "no line after the 69: $(cat "$SIM_TMP/H-1.err")"
wait_until 5 lines hook.out 1	# the agent's run for the 69 first (judged below)
out=$(on_host H-2 "$SIM_ROOT/build/madsend" report "$l1" "$(lane 68 0)") || fail "madsend report 68: $out"
wait_pid "$listener" 10 || fail "--count 2: the listener is still running: $(cat "$SIM_TMP/H-1.out")"
wait "$listener" || fail "--count 2: the listener exited $?"

python3 - "$SIM_TMP/H-1.out" "$l1" "$l3" <<'PY' || fail "ibsm-listen's lines: $(cat "$SIM_TMP/H-1.out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
slid, dlid = int(sys.argv[2]), int(sys.argv[3])
keys = {"trap", "generic", "type", "producer_type", "issuer_lid", "issuer_gid",
        "time", "wildcard", "lane", "slid", "dlid", "lmc", "sl"}
assert len(lines) == 2, "want 2 lines, got %d" % len(lines)
for n, (trap, sl) in zip(lines, ((69, 1), (68, 0))):
    assert set(n) == keys, "keys %s" % sorted(set(n) ^ keys)
    got = (n["trap"], n["lane"], n["wildcard"], n["slid"], n["dlid"], n["lmc"], n["sl"])
    assert got == (trap, True, False, slid, dlid, 0, sl), got
PY
for t in 69:1 68:0; do
	want=$(printf 'IBSM_DLID=%s\nIBSM_LANE=1\nIBSM_LID=%s\nIBSM_LMC=0\nIBSM_SL=%s\nIBSM_SLID=%s\n' \
		"$l3" "$l3" "${t#*:}" "$l1")
	got=$(grep -E '^IBSM_(DLID|LANE|LID|LMC|SL|SLID)=' "$SIM_TMP/env.${t%:*}")
	[ "$got" = "$want" ] || fail "--exec's environment for the ${t%:*}: $(tr '\n' ' ' <<<"$got")"
done
[ "$(cat "$SIM_TMP/hook.out")" = "$l3 0 1
$l3 0 0" ] || fail "the agent's hook: $(cat "$SIM_TMP/hook.out")"
pass "69 then 68 lane order to H-1 (LID $l1) about H-3 (LID $l3): JSON lane/slid/dlid/lmc/sl, no path fields; --exec got IBSM_SL 1 then 0, IBSM_DLID $l3; etc/ibsm-lanes.sh ran the hook as '$l3 0 1', '$l3 0 0'"
