#!/bin/bash
# Job-aware routing (routing.jobs least-max-load, sm/jobs.c) on the
# 16-host XGFT(3;2,2,4;1,2,2), judged with infiniband-diags:
#  - two jobs whose nodes interleave (a ring and a 3dnn; D-mod-K would
#    load a link 1.5): after `job start --wait` the switches' tables
#    (dump_fts) are the base ones with exactly the jobs' planned entries,
#    and job_loads.py, walking the dumped tables with flows it makes
#    itself, gives each job the max load `job loads` reports;
#  - a restart of ibsmd, then a failover to a standby sharing the state
#    directory: the tables stay the jobs' (the file re-applied, nothing
#    lost), both jobs ready on the new master;
#  - job end of both: dump_fts equals the base tables dumped before;
#  - refusals: an unknown host, a host in a running job, a duplicate ID.
. "$(dirname "$0")/jobs_lib.sh"

net="$SIM_TMP/xgft.net"
gen xgft --m 2,2,4 --w 1,2,2 -o "$net"
sim_start "$net"
A_NODES=(2 10 0 14 6 5 3 8)
B_NODES=(7 11 15 1 12 13 9 4)
A="A:ring:$(names H "${A_NODES[@]}")"
B="B:3dnn:$(names H "${B_NODES[@]}")"

start_sm one H-0 10
wait_up 30 "$SIM_TMP/one.log" "(first master)"
lids_tables "$SIM_TMP/base"
ctl one job start A --nodes "$(names H "${A_NODES[@]}")" --pattern ring --wait --timeout 20 \
	>"$SIM_TMP/a.out" 2>&1 || fail "job start A: $(cat "$SIM_TMP/a.out")"
[ "$(cat "$SIM_TMP/a.out")" = ready ] || fail "job start A --wait printed $(cat "$SIM_TMP/a.out")"
ctl one job start B --nodes "H-[7,11,15,1,12-13,9,4]" --pattern 3dnn --wait \
	>"$SIM_TMP/b.out" 2>&1 || fail "job start B: $(cat "$SIM_TMP/b.out")"
all_ready one A B || fail "job list: $(ctl one job list)"
[ "$(job_field one B dmodk_max_load)" != "$(job_field one B max_load)" ] ||
	[ "$(job_field one A entries)" -gt 0 ] ||
	fail "neither job left D-mod-K: the test shows nothing"
lids_tables "$SIM_TMP/jobs"
got=$(planned "$SIM_TMP/base" "$SIM_TMP/jobs" one A B)
loads=$(loads_match "$SIM_TMP/jobs" one "$A" "$B")
pass "two jobs ready: $got; loads from the dumps $loads(D-mod-K: A=$(job_field one A dmodk_max_load) B=$(job_field one B dmodk_max_load))"

# refusals
ctl one job start C --nodes 'H-[99]' >"$SIM_TMP/c.out" 2>&1 && fail "an unknown host was accepted"
grep -q "no host named 'H-99'" "$SIM_TMP/c.out" || fail "unknown host: $(cat "$SIM_TMP/c.out")"
ctl one job start C --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a host of job A was accepted"
grep -q "in running job A" "$SIM_TMP/c.out" || fail "busy host: $(cat "$SIM_TMP/c.out")"
ctl one --json job start A --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a duplicate ID was accepted"
grep -q '"error": "job start: job A is running"' "$SIM_TMP/c.out" || fail "duplicate: $(cat "$SIM_TMP/c.out")"
[ "$(status_field "$SIM_TMP/one.sock" jobs.refused.node_in_job)" = 1 ] || fail "refusal not counted"
pass "refused: an unknown host, a host in a running job, a duplicate ID (counted)"

# restart: the jobs come back from the state directory
kill -TERM "${PID[one]}"
wait_pid "${PID[one]}" 5 || fail "ibsmd did not stop"
start_sm one H-0 10
wait_up 30 "$SIM_TMP/one.log" "(restart)"
wait_until 10 all_ready one A B || fail "after a restart: $(ctl one job list)"
lids_tables "$SIM_TMP/restart"
same_as "$SIM_TMP/jobs" "$SIM_TMP/restart" "restart"
loads=$(loads_match "$SIM_TMP/restart" one "$A" "$B")
pass "restart: both jobs ready again, tables unchanged, loads $loads"

# failover: a standby sharing the state directory takes over
start_sm two H-1 1
wait_until 20 grep -q 'STANDBY' "$SIM_TMP/two.log" || fail "no standby: $(tail -n 3 "$SIM_TMP/two.log")"
kill -KILL "${PID[one]}"
wait_up 30 "$SIM_TMP/two.log" "(failover)"
wait_until 10 all_ready two A B || fail "after a failover: $(ctl two job list)"
lids_tables "$SIM_TMP/failover"
same_as "$SIM_TMP/jobs" "$SIM_TMP/failover" "failover"
loads=$(loads_match "$SIM_TMP/failover" two "$A" "$B")
pass "failover: the standby re-applied both jobs, tables unchanged, loads $loads"

ctl two job end A >"$SIM_TMP/e.out" 2>&1 || fail "job end A: $(cat "$SIM_TMP/e.out")"
lids_tables "$SIM_TMP/end-a"
got=$(planned "$SIM_TMP/base" "$SIM_TMP/end-a" two B)
ctl two job end B >"$SIM_TMP/e.out" 2>&1 || fail "job end B: $(cat "$SIM_TMP/e.out")"
lids_tables "$SIM_TMP/end"
same_as "$SIM_TMP/base" "$SIM_TMP/end" "job end"
[ "$(status_field "$SIM_TMP/two.sock" jobs.max_link_load)" = 0.0 ] || fail "load left after the ends"
pass "job end A: B's entries alone ($got); job end B: the base tables byte for byte, no load left"
