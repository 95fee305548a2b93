#!/bin/bash
# Job-aware routing (routing.jobs least-max-load, sm/jobs.c) on the
# 16-host XGFT(3;2,2,4;1,2,2), judged with infiniband-diags
# (jobs_scenario in jobs_lib.sh):
#  - two jobs whose nodes interleave (a ring and a 3dnn; D-mod-K would
#    load a link 1.5): after `job start --wait` the switches' tables
#    (dump_fts) are the base ones with exactly the jobs' planned entries,
#    and job_loads.py, walking the dumped tables with flows it makes
#    itself, gives each job the max load `job loads` reports;
#  - refusals: an unknown host, a host in a running job, a duplicate ID;
#  - a restart of ibsmd, then a failover to a standby sharing the state
#    directory: the tables stay the jobs' (the file re-applied), both
#    jobs ready on the new master;
#  - job end of both: dump_fts equals the base tables dumped before.
. "$(dirname "$0")/jobs_lib.sh"

refusals() {
	ctl one job start C --nodes 'H-[99]' >"$SIM_TMP/c.out" 2>&1 && fail "an unknown host was accepted"
	grep -q "no host named 'H-99'" "$SIM_TMP/c.out" || fail "unknown host: $(cat "$SIM_TMP/c.out")"
	ctl one job start C --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a host of job A was accepted"
	grep -q "in running job A" "$SIM_TMP/c.out" || fail "busy host: $(cat "$SIM_TMP/c.out")"
	ctl one --json job start A --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a duplicate ID was accepted"
	grep -q '"error": "job start: job A is running"' "$SIM_TMP/c.out" ||
		fail "duplicate: $(cat "$SIM_TMP/c.out")"
	[ "$(status_field "$SIM_TMP/one.sock" jobs.refused.node_in_job)" = 1 ] ||
		fail "refusal not counted"
	pass "refused: an unknown host, a host in a running job, a duplicate ID (counted)"
}

jobs_scenario "--m 2,2,4 --w 1,2,2" ring "2 10 0 14 6 5 3 8" 3dnn "7 11 15 1 12 13 9 4" refusals
