#!/bin/bash
# Multicast groups bounded by the switches' MFTs under ibsim, whose switches
# hold 1,024 MLIDs (SwitchInfo MulticastFDBCap): ibsmd (the per-port bound
# multicast.max_groups_per_port raised out of the way) on H-7 of a small
# tree; H-0 creates 1,100 groups with build/mcjoin --count (MCMemberRecord
# Set): the broadcast group and 1,023 of them take the 1,024 MLIDs, the
# other 77 are refused ERR_NO_RESOURCES; then H-1 throws 20,000 creates
# at the full table for a few seconds: every one refused, and ibsmd's log
# holds at most one refusal line a second (it wrote one per refusal:
# 20,000 lines, 1.8 MB in 3 s); `ibsmctl status` counts them and names
# the limit; `ibroute -M` of a leaf reads its MFT (ibsim takes no MLID
# past 0xC3FF).
. "$(dirname "$0")/mcast_lib.sh"
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 4 -o "$net"
sim_start "$net"
sock="$SIM_TMP/sock"
log="$SIM_TMP/ibsmd.log"
printf 'multicast: {max_groups_per_port: 16383}\n' >"$SIM_TMP/p.yaml"
on_host_bg H-7 "$IBSMD" -c "$SIM_TMP/p.yaml" -S "$SIM_TMP/state" -s "$sock" \
	--log-level info >"$log" 2>&1
wait_up 30 "$log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }

# summary_of FILE KEY: a field of mcjoin's summary line
summary_of() { json_field "$2" "$(grep '"summary"' "$1")"; }

on_host H-0 "$MCJOIN" -k 16 join --mgid ff15:1234::1 --create --count 1100 \
	>"$SIM_TMP/fill.out" 2>&1
ok=$(summary_of "$SIM_TMP/fill.out" ok)
refused=$(grep -c '"status_name":"no_resources"' "$SIM_TMP/fill.out")
[ "$ok" = 1023 ] && [ "$refused" = 77 ] ||
	fail "1,100 creates: $ok ok, $refused no_resources, want 1023 and 77: $(tail -n 2 "$SIM_TMP/fill.out")"
last=$(sed -n 's/.*"status":0,.*"mlid":"\(0x[0-9a-f]*\)".*/\1/p' "$SIM_TMP/fill.out" | sort | tail -n 1)
[ "$last" = 0xc3ff ] || fail "the highest MLID given: $last, want 0xc3ff"
pass "1,100 creates from H-0: 1,023 made (with the broadcast group, MLIDs 0xC000..$last), 77 refused ERR_NO_RESOURCES"

# the flood: rounds of 20,000 creates from H-1 for 2.5 s at least
t0=$(date +%s.%N)
rounds=0 refused=0
while :; do
	on_host H-1 "$MCJOIN" -k 32 join --mgid ff15:5678::1 --create --count 20000 \
		>"$SIM_TMP/flood.out" 2>&1
	n=$(grep -c '"status_name":"no_resources"' "$SIM_TMP/flood.out")
	[ "$n" = 20000 ] || fail "a round of 20,000 creates: $n refused: $(tail -n 2 "$SIM_TMP/flood.out")"
	refused=$((refused + n)) rounds=$((rounds + 1))
	python3 -c "import sys, time; sys.exit(time.time() - $t0 < 2.5)" && break
done
secs=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
sleep 1.2	# the limiter's count line, flushed every second
# every refusal line since the first of the fill, 1.2 s before the flood at most
lines=$(grep -c ']: SA: multicast group not created' "$log")
bytes=$(stat -c %s "$log")
python3 -c "import sys; sys.exit(not (2 <= $lines <= int($secs) + 3))" ||
	fail "$lines refusal lines for $((refused + 77)) refusals in $secs s: $(grep 'multicast group not created' "$log" | tail -n 3)"
grep -q 'similar messages suppressed ("SA: multicast group not created' "$log" ||
	fail "no count of the lines held back: $(tail -n 3 "$log")"
pass "$refused creates refused in $secs s ($rounds rounds): $lines refusal lines in all (and the counts of those held back), log $bytes bytes"

st=$(ctl --json status) || fail "ibsmctl status: $st"
jq -e --argjson n $((refused + 77)) '.multicast.mlid_limit == 1024 and
	.multicast.groups == 1024 and .multicast.creates_refused.mlids == $n and
	.multicast.groups_without_tree == 0' <<<"$st" >/dev/null || fail "status: $(jq -c .multicast <<<"$st")"
pass "ibsmctl status: $(jq -c .multicast <<<"$st")"
kill -0 "$SIM_LAST_PID" 2>/dev/null || fail "ibsmd exited: $(tail -n 3 "$log")"
