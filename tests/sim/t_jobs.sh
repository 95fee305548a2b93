#!/bin/bash
# Job-aware routing (routing.jobs least-max-load, sm/jobs.c) on the
# 16-host XGFT(3;2,2,4;1,2,2), judged with infiniband-diags
# (jobs_scenario in jobs_lib.sh):
#  - two jobs whose nodes interleave (a ring and a 3dnn; D-mod-K would
#    load a link 1.5): after `job start --wait` the switches' tables
#    (dump_fts) are the base ones with exactly the jobs' planned entries,
#    and job_loads.py, walking the dumped tables with flows it makes
#    itself, gives each job the max load `job loads` reports;
#  - /metrics: ibsmd_jobs and each job's ibsmd_job_max_load, as job loads;
#  - a name of the node-name map resolves (H-15 as gpu-15);
#  - refusals: an unknown host, a host in a running job, a duplicate ID;
#  - a node of job A unlinked: job list names it missing, status counts
#    it, the log says so; linked again: the tables are the jobs' again;
#  - a restart of ibsmd, then a failover to a standby sharing the state
#    directory: the tables stay the jobs' (the file re-applied), both
#    jobs ready on the new master;
#  - job end of both: dump_fts equals the base tables dumped before;
#  - LFT Sets without answers: job start --wait --timeout (a pattern
#    file's flows) fails, the job
#    stays "writing" and is ready once they are answered again;
#  - a reload turning routing.jobs off is refused while a job runs, taken
#    once none does; then job start is refused as off (counted).
. "$(dirname "$0")/jobs_lib.sh"

printf '0x%016x "gpu-15"\n' $((0x0002c90200000000 + 4 * 15)) >"$SIM_TMP/names"
JOBS_POLICY_MORE="node_name_map: $SIM_TMP/names
"

refusals() {
	ctl one metrics >"$SIM_TMP/metrics.txt" || fail "metrics"
	grep -q '^ibsmd_jobs 2$' "$SIM_TMP/metrics.txt" || fail "metrics: $(grep jobs "$SIM_TMP/metrics.txt")"
	local id m
	for id in A B; do
		m=$(sed -n "s/^ibsmd_job_max_load{job=\"$id\"} //p" "$SIM_TMP/metrics.txt")
		python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-9)' \
			"${m:-nan}" "$(job_field one "$id" max_load)" ||
			fail "metrics: job $id max load ${m:-none}, job loads $(job_field one "$id" max_load)"
	done
	pass "/metrics: ibsmd_jobs 2, ibsmd_job_max_load of A and B as job loads"
	ctl one job start M --nodes gpu-15 >"$SIM_TMP/m.out" 2>&1 && fail "H-15 of job B taken as gpu-15"
	grep -q "host 'gpu-15' is in running job B" "$SIM_TMP/m.out" || fail "node-name map: $(cat "$SIM_TMP/m.out")"
	ctl one job start C --nodes 'H-[99]' >"$SIM_TMP/c.out" 2>&1 && fail "an unknown host was accepted"
	grep -q "no host named 'H-99'" "$SIM_TMP/c.out" || fail "unknown host: $(cat "$SIM_TMP/c.out")"
	ctl one job start C --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a host of job A was accepted"
	grep -q "in running job A" "$SIM_TMP/c.out" || fail "busy host: $(cat "$SIM_TMP/c.out")"
	ctl one --json job start A --nodes 'H-2' >"$SIM_TMP/c.out" 2>&1 && fail "a duplicate ID was accepted"
	grep -q '"error": "job start: job A is running"' "$SIM_TMP/c.out" ||
		fail "duplicate: $(cat "$SIM_TMP/c.out")"
	[ "$(status_field "$SIM_TMP/one.sock" jobs.refused.node_in_job)" = 2 ] ||
		fail "refusals not counted: $(status_field "$SIM_TMP/one.sock" jobs.refused)"
	pass "refused: gpu-15 (the map's name of H-15, in job B), an unknown host, a host in a running job, a duplicate ID (counted)"

	sim_cmd 'Unlink "H-5"[1]' >/dev/null
	ctl one sweep --heavy >/dev/null || fail "sweep --heavy refused"
	missing_h5() {
		[ "$(ctl one --json job list | python3 -c '
import json, sys
print([(j["state"], j["missing"]) for j in json.load(sys.stdin)["jobs"] if j["id"] == "A"][0])')" = "('degraded', ['H-5'])" ]
	}
	wait_until 15 missing_h5 || fail "H-5 unlinked, not missing: $(ctl one job list)"
	[ "$(status_field "$SIM_TMP/one.sock" jobs.nodes_missing)" = 1 ] || fail "status: no node missing"
	grep -q 'job A: 1 of its 8 nodes are not in the fabric' "$SIM_TMP/one.log" ||
		fail "no log line for the missing node"
	sim_cmd 'ReLink "H-5"[1]' >/dev/null
	ctl one sweep --heavy >/dev/null || fail "sweep --heavy refused"
	wait_until 15 eval '[ "$(status_field "$SIM_TMP/one.sock" jobs.nodes_missing)" = 0 ]' ||
		fail "H-5 back, still missing: $(ctl one job list)"
	wait_until 10 all_ready one A B || fail "H-5 back: $(ctl one job list)"
	lids_tables "$SIM_TMP/back"
	same_as "$SIM_TMP/jobs" "$SIM_TMP/back" "H-5 back"
	pass "H-5 unlinked: job A degraded, H-5 missing (status, log); linked again: the jobs' tables again"
}

jobs_scenario "--m 2,2,4 --w 1,2,2" ring "2 10 0 14 6 5 3 8" 3dnn "7 11 15 1 12 13 9 4" refusals

# LFT Sets that get no answer: --wait times out, the job stays "writing"
# and is written (by the heavy sweeps the failures ask for) once they do
lft_errors() {	# lft_errors RATE: on every port of the leaves and the level above
	local s p
	for s in L0-S{0..7} L1-S{0..7}; do
		for p in 1 2 3 4; do
			sim_cmd "Error \"$s\"[$p] $1${2:+ $2}" >/dev/null
		done
	done
}
lft_errors 100 0x19
# job C's flows from a file ibsmctl reads: a ring of 8 ranks, by hand
for r in 0 1 2 3 4 5 6 7; do echo "$r $(((r + 1) % 8))  # next"; echo "$r $(((r + 7) % 8))"; done \
	>"$SIM_TMP/c.flows"
ctl two --json job start C --nodes "$(names H 2 10 0 14 6 5 3 8)" --pattern "$SIM_TMP/c.flows" \
	--wait --timeout 2 \
	>"$SIM_TMP/c.out" 2>&1 && fail "job start --wait answered with the LFT Sets failing"
grep -q '"error": "job C: timed out; it stays and is still being written"' "$SIM_TMP/c.out" ||
	fail "timeout: $(cat "$SIM_TMP/c.out")"
ctl two job list | grep -q '^  state: writing$' || fail "job C is not writing: $(ctl two job list)"
lft_errors 0
wait_until 15 all_ready two C || fail "job C never ready: $(ctl two job list)"
[ "$(job_field two C entries)" -gt 0 ] || fail "job C has no entry: the writes showed nothing"
[ "$(job_field two C flows)" = 16 ] || fail "job C: $(job_field two C flows) flows, the file has 16"
ctl two --json job list | grep -q '"pattern": "file"' || fail "job C's pattern is not the file's"
lids_tables "$SIM_TMP/late"
got=$(planned "$SIM_TMP/base" "$SIM_TMP/late" two C) || exit 1
pass "LFT Sets unanswered: --wait timed out (job C writing), answered later: ready, $got"

sed -i 's/jobs: least-max-load/jobs: off/' "$SIM_TMP/two.yaml"
ctl two reload >"$SIM_TMP/r.out" 2>&1 && fail "a reload turned job routing off under job C"
grep -q 'routing.jobs off while jobs run' "$SIM_TMP/r.out" || fail "reload: $(cat "$SIM_TMP/r.out")"
ctl two job end C >/dev/null || fail "job end C"
ctl two reload >"$SIM_TMP/r.out" 2>&1 || fail "reload: $(cat "$SIM_TMP/r.out")"
ctl two --json job start D --nodes H-4 >"$SIM_TMP/d.out" 2>&1 && fail "job start with routing.jobs off"
grep -q '"error": "job start: job-aware routing is off' "$SIM_TMP/d.out" || fail "off: $(cat "$SIM_TMP/d.out")"
[ "$(status_field "$SIM_TMP/two.sock" jobs.refused.off)" = 1 ] || fail "off refusal not counted"
pass "reload to routing.jobs off: refused while job C ran, taken after; job start then refused (counted)"
