#!/bin/bash
# Two ibsmd daemons on one ibsim fabric (sm/smstate.c), judged with
# infiniband-diags only (sminfo, ibnetdiscover, dump_fts), never with
# ibsmd's view of itself:
#  - priorities 5 and 10, the 10 first: the 5 goes STANDBY and sends no Set
#    at all (tests/shims/maddrop.c counts every MAD it sends);
#  - the 5 first, the 10 second: the running master hands over (HANDOVER
#    and ACKNOWLEDGE in both logs), the newcomer is MASTER, the old one
#    STANDBY and from then on sends no Set; LIDs (ibnetdiscover) and
#    forwarding tables (dump_fts) identical before and after;
#  - equal priorities, in both orders: the lower port GUID is MASTER;
#  - both started together (5 and 10, then equal): the same outcome;
#  - SIGKILL of the master: the standby is MASTER (ibsmctl status and
#    sminfo from a host) within (poll_retries + 1) x poll_ms + 1 s, LIDs and
#    tables unchanged, and a link lost after that is repaired by the new
#    master (repair_check.py on dumps before and after);
#  - a master frozen (SIGSTOP) until the standby took over, then thawed: the
#    two masters meet and the lower hands over, once.
. "$(dirname "$0")/common.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
REPAIR="$SIM_ROOT/tests/sim/repair_check.py"

POLL_MS=500
POLL_RETRIES=2
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"

A=H-2	# the lower port GUID
B=H-9
policy() {	# policy NAME PRIORITY [more sm keys]
	printf 'sm: {priority: %s, poll_ms: %s, poll_retries: %s%s}\nsweep: {interval_s: 1}\n' \
		"$2" "$POLL_MS" "$POLL_RETRIES" "${3:+, $3}" >"$SIM_TMP/$1.yaml"
}

# start_sm NAME HOST PRIORITY: ibsmd NAME on HOST, its own state dir,
# socket, policy, log ($SIM_TMP/NAME.log) and MAD counts ($SIM_TMP/NAME.count)
declare -A PID
start_sm() {
	local name=$1 host=$2
	policy "$name" "$3"
	MADDROP_COUNT="$SIM_TMP/$name.count" MADDROP_INTERVAL_MS=100 \
		SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		on_host_bg "$host" "$IBSMD" -S "$SIM_TMP/$name.state" \
		-s "$SIM_TMP/$name.sock" -c "$SIM_TMP/$name.yaml" --log-level info \
		>"$SIM_TMP/$name.log" 2>&1
	PID[$name]=$SIM_LAST_PID
}
stop_sm() {
	kill -TERM "${PID[$1]}" 2>/dev/null
	wait_pid "${PID[$1]}" 5 || fail "$1 did not stop on SIGTERM"
}
ctl() { local n=$1; shift; "$IBSMCTL" -s "$SIM_TMP/$n.sock" "$@"; }
state_is() { ctl "$1" status 2>/dev/null | grep -q "^state: $2\$"; }
sets() { sed -n 's/^set //p' "$SIM_TMP/$1.count" 2>/dev/null; }
up() { grep -q '^subnet up:' "$SIM_TMP/$1.log"; }
logs() { tail -n 4 "$SIM_TMP/$1.log"; }
# master_up NAME HOST: NAME runs the subnet (its log and sminfo from a host)
master_up() {
	wait_until 20 up "$1" || fail "$1: no subnet up: $(logs "$1")"
	wait_until 5 sminfo_master "$2" || fail "sminfo does not name $2: $(on_host H-5 sminfo 2>&1)"
}
# taken_over NEW OLD NEWHOST: OLD handed the subnet to NEW
taken_over() {
	wait_until 20 state_is "$1" MASTER || fail "$1 is not MASTER: $(logs "$1")"
	wait_until 10 state_is "$2" STANDBY || fail "$2 is not STANDBY: $(logs "$2")"
	master_up "$1" "$3"
	grep -q "HANDOVER to SM $(host_guid "$3")" "$SIM_TMP/$2.log" || fail "$2 did not hand over: $(logs "$2")"
}
# steady MASTER STANDBY HOST SECONDS: for SECONDS the roles hold, sminfo
# from a host names HOST's port as master, and STANDBY sends no Set
steady() {
	local m=$1 s=$2 n
	sleep 0.3	# the counts file lags by up to MADDROP_INTERVAL_MS
	n=$(sets "$s")
	[ -n "$n" ] || fail "no MAD counts from $s"
	cp "$SIM_TMP/$s.count" "$SIM_TMP/$s.count.before"
	sleep "$4"
	state_is "$m" MASTER || fail "$m is no longer MASTER: $(logs "$m")"
	state_is "$s" STANDBY || fail "$s is no longer STANDBY: $(logs "$s")"
	sminfo_master "$3" || fail "sminfo does not name $3's port: $(on_host H-5 sminfo 2>&1)"
	[ "$(sets "$s")" = "$n" ] ||
		fail "$s sent $(( $(sets "$s") - n )) Sets as STANDBY: $(diff "$SIM_TMP/$s.count.before" "$SIM_TMP/$s.count" | grep '_method_0x02_attr')"
}
# joins_behind M MHOST MPRIO S SHOST SPRIO: M runs the subnet, S starts
# second, goes STANDBY and never sends a Set
joins_behind() {
	start_sm "$1" "$2" "$3"
	master_up "$1" "$2"
	start_sm "$4" "$5" "$6"
	wait_until 20 state_is "$4" STANDBY || fail "$4 is not STANDBY: $(logs "$4")"
	steady "$1" "$4" "$2" 3
	[ "$(sets "$4")" = 0 ] || fail "the STANDBY sent Sets: $(grep -E '^(set|class.*_method_0x02)' "$SIM_TMP/$4.count")"
}
# together M MHOST MPRIO S SHOST SPRIO: S and M started at once (S first):
# M ends MASTER and S STANDBY, sending no Set from then on; both stopped
together() {
	start_sm "$4" "$5" "$6"
	start_sm "$1" "$2" "$3"
	wait_until 20 state_is "$1" MASTER || fail "started together: $1 is not MASTER: $(logs "$1")"
	wait_until 10 state_is "$4" STANDBY || fail "started together: $4 is not STANDBY: $(logs "$4")"
	master_up "$1" "$2"
	steady "$1" "$4" "$2" 2
	pass "$3 and $6 started together: $(on_host H-5 sminfo 2>&1); $4 STANDBY with no Set"
	stop_sm "$4"
	stop_sm "$1"
}

sim_start "$net"

# ---- 1. priorities 10 then 5: the 5 is STANDBY and writes nothing ----
joins_behind hi "$B" 10 lo "$A" 5
pass "10 then 5: $(on_host H-5 sminfo 2>&1); the STANDBY sent $(sed -n 's/^total //p' "$SIM_TMP/lo.count") MADs, no Set"
stop_sm lo
stop_sm hi

# ---- 2. equal priorities: the lower port GUID is MASTER, either order ----
joins_behind a "$A" 7 b "$B" 7
pass "equal priorities, lower GUID first: $(on_host H-5 sminfo 2>&1); the other STANDBY, no Set"
stop_sm b
stop_sm a

start_sm b "$B" 7
master_up b "$B"
start_sm a "$A" 7
taken_over a b "$A"
steady a b "$A" 2
pass "equal priorities, lower GUID second: handed over, $(on_host H-5 sminfo 2>&1)"
stop_sm b
stop_sm a

# ---- both at once: whoever finished discovery first, the same end ----
# (which of the two sweeps first is up to the scheduler: a STANDBY that was
# briefly MASTER may have written, so only its STANDBY time is counted)
together thi "$B" 10 tlo "$A" 5
together ta "$A" 7 tb "$B" 7

# ---- 3. 5 first, then 10: HANDOVER and ACKNOWLEDGE, nothing changes ----
start_sm lo "$A" 5
master_up lo "$A"
lids_tables "$SIM_TMP/before"
start_sm hi "$B" 10
taken_over hi lo "$B"
grep -q "SMInfo Set ACKNOWLEDGE from SM $(host_guid "$B")" "$SIM_TMP/lo.log" ||
	fail "lo's log has no ACKNOWLEDGE from hi: $(grep -E 'HANDOVER|ACK|MASTER' "$SIM_TMP/lo.log" | tail -n 4)"
grep -q "SMInfo Set HANDOVER from SM $(host_guid "$A")" "$SIM_TMP/hi.log" || fail "hi's log has no HANDOVER: $(logs hi)"
grep -q "ACKNOWLEDGE to SM $(host_guid "$A")" "$SIM_TMP/hi.log" || fail "hi's log has no ACKNOWLEDGE: $(logs hi)"
lids_tables "$SIM_TMP/handed"
same_as "$SIM_TMP/before" "$SIM_TMP/handed" "after the handover"
# nothing that was right is written again: no LFT block, SwitchInfo or P_Key
# table (PortInfo goes out: the SM LID changed, and ibsim keeps no NeighborMTU)
first_sweep=$(grep -m 1 'heavy sweep done' "$SIM_TMP/hi.log")
grep -q ': 0 LFT blocks, [0-9]* PortInfo, 0 SwitchInfo, 0 P_Key writes' <<<"$first_sweep" ||
	fail "the new master rewrote what was right: $first_sweep"
steady hi lo "$B" 3
pass "5 then 10: HANDOVER/ACKNOWLEDGE in both logs, $(on_host H-5 sminfo 2>&1); LIDs and LFTs identical (ibnetdiscover, dump_fts); the new master wrote ${first_sweep#*: }; the new STANDBY sent no Set in 3 s"

# ---- 4. SIGKILL of the master: the standby takes over in time ----
limit=$(( (POLL_RETRIES + 1) * POLL_MS + 1000 ))
disown "${PID[hi]}"	# no "Killed" from bash; the cleanup still finds it
kill -KILL "${PID[hi]}"
t0=$(date +%s%N)
ctl_ms='' smi_ms=''
since() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
while [ "$(since)" -le $((limit * 4)) ]; do
	[ -z "$ctl_ms" ] && state_is lo MASTER && ctl_ms=$(since)
	[ -z "$smi_ms" ] && sminfo_master "$A" && smi_ms=$(since)
	[ -n "$ctl_ms" ] && [ -n "$smi_ms" ] && break
	sleep 0.02
done
note "SIGKILL of the master: ibsmctl says MASTER after ${ctl_ms:-never} ms, sminfo after ${smi_ms:-never} ms (limit $limit ms)"
[ -n "$ctl_ms" ] && [ "$ctl_ms" -le "$limit" ] || fail "lo not MASTER within $limit ms (${ctl_ms:-never}): $(logs lo)"
[ -n "$smi_ms" ] && [ "$smi_ms" -le "$limit" ] || fail "sminfo does not show lo MASTER within $limit ms (${smi_ms:-never})"
wait_until 10 up lo || fail "lo: no subnet up"
grep -q 'did not answer .* polls' "$SIM_TMP/lo.log" || fail "lo's log does not say why it took over"
lids_tables "$SIM_TMP/failover"
same_as "$SIM_TMP/handed" "$SIM_TMP/failover" "after the failover"
first_sweep=$(sed -n '/did not answer .* polls/,$p' "$SIM_TMP/lo.log" | grep -m 1 'heavy sweep done')
grep -q ': 0 LFT blocks, [0-9]* PortInfo, 0 SwitchInfo, 0 P_Key writes' <<<"$first_sweep" ||
	fail "the new master rewrote what was right: $first_sweep"
pass "SIGKILL of the master: lo MASTER after $ctl_ms ms (ibsmctl), $smi_ms ms (sminfo), limit $limit ms; LIDs and LFTs identical"

# a leaf-to-spine link lost after that: the new master repairs it
leaf=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } /^\[[0-9]+\]\t"L[1-9]/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print sw, $1; exit }' "$net")
[ -n "$leaf" ] || fail "no leaf-to-spine link in $net"
link="\"${leaf% *}\"[${leaf#* }]"
n=$(grep -c '^subnet up:' "$SIM_TMP/lo.log")
more_ups() { [ "$(grep -c '^subnet up:' "$SIM_TMP/lo.log")" -gt "$n" ]; }
sim_cmd "Unlink $link" >/dev/null
wait_until 10 more_ups || fail "no sweep after Unlink $link: $(logs lo)"
check_up "$SIM_TMP/repaired"
out=$(python3 "$REPAIR" --topo-before "$SIM_TMP/failover.topo" --lfts-before "$SIM_TMP/failover.lfts" \
	--topo-after "$SIM_TMP/repaired.topo" --lfts-after "$SIM_TMP/repaired.lfts") || fail "$out"
pass "Unlink $link after the failover, repaired by the new master: $out"

# ---- 5. two masters meet: hi, frozen (SIGSTOP) while lo took over, resumes ----
# hi (10) comes back (a handover from lo), is frozen until lo has taken the
# subnet over, then thawed: both are MASTER, and the lower one hands over,
# once -- no second HANDOVER, no flapping.  (No sminfo while hi is frozen:
# a host asking its SM LID would wait for hi.)
start_sm hi "$B" 10
taken_over hi lo "$B"
kill -STOP "${PID[hi]}"
wait_until 10 state_is lo MASTER || { kill -CONT "${PID[hi]}"; fail "lo did not take over from a frozen hi: $(logs lo)"; }
wait_until 10 up lo
n=$(grep -c 'HANDOVER to SM' "$SIM_TMP/lo.log")
kill -CONT "${PID[hi]}"
more_handovers() { [ "$(grep -c 'HANDOVER to SM' "$SIM_TMP/lo.log")" -gt "$n" ]; }
wait_until 10 more_handovers ||
	fail "two masters, no HANDOVER: $(logs lo) / $(logs hi)"
grep -q 'is also MASTER and ranks below us: waiting for its HANDOVER' "$SIM_TMP/hi.log" ||
	grep -q 'SMInfo Set HANDOVER from SM' "$SIM_TMP/hi.log" || fail "hi's log: $(logs hi)"
wait_until 10 state_is lo STANDBY || fail "lo is not STANDBY: $(logs lo)"
state_is hi MASTER || fail "hi is not MASTER: $(logs hi)"
steady hi lo "$B" 3
[ "$(grep -c 'HANDOVER to SM' "$SIM_TMP/lo.log")" = $((n + 1)) ] ||
	fail "more than one HANDOVER after the masters met: $(grep 'HANDOVER' "$SIM_TMP/lo.log" | tail -n 3)"
pass "two masters met (hi frozen, lo took over, hi thawed): one HANDOVER, $(on_host H-5 sminfo 2>&1), lo STANDBY with no Set"
