# tests/sim/jobs_lib.sh: what the job-routing tests share (t_jobs.sh,
# t_jobs_big.sh); sources common.sh.  A job's entries are judged from
# dump_fts against the base tables dumped before, its loads by
# tests/sim/job_loads.py, which makes the flows and walks the dumped
# tables itself.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

JOB_LOADS="$SIM_ROOT/tests/sim/job_loads.py"

# jobs_policy NAME PRIORITY: $SIM_TMP/NAME.yaml, job routing over dmodk
# (and the lines of $JOBS_POLICY_MORE)
jobs_policy() {
	printf 'routing: {engine: dmodk, jobs: least-max-load}\nsm: {priority: %s, poll_ms: 500, poll_retries: 2}\nsweep: {interval_s: 2}\n%s' \
		"$2" "${JOBS_POLICY_MORE:-}" >"$SIM_TMP/$1.yaml"
}

# start_sm NAME HOST PRIORITY: ibsmd NAME on HOST with the shared state
# directory $SIM_TMP/state, its socket $SIM_TMP/NAME.sock, its log
# $SIM_TMP/NAME.log; its pid in PID[NAME]
declare -A PID
start_sm() {
	jobs_policy "$1" "$3"
	on_host_bg "$2" "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/$1.sock" \
		-c "$SIM_TMP/$1.yaml" --log-level info >"$SIM_TMP/$1.log" 2>&1
	PID[$1]=$SIM_LAST_PID
}
ctl() { local n=$1; shift; timeout 90 "$IBSMCTL" -s "$SIM_TMP/$n.sock" "$@"; }

# job_field NAME ID KEY: KEY of job ID in `job loads ID --json`
job_field() {
	ctl "$1" --json job loads "$2" | python3 -c '
import json, sys
print(json.load(sys.stdin)["jobs"][0][sys.argv[1]])' "$3"
}

# all_ready NAME ID...: job list says every ID is ready
all_ready() {
	local n=$1
	shift
	ctl "$n" --json job list | python3 -c '
import json, sys
st = {j["id"]: j["state"] for j in json.load(sys.stdin)["jobs"]}
sys.exit(0 if all(st.get(i) == "ready" for i in sys.argv[1:]) and len(st) == len(sys.argv) - 1 else 1)' "$@"
}

# planned BASE NOW NAME ID...: NOW's forwarding entries are BASE's with
# exactly the entries of the jobs ID... (job loads ID --json) in place
planned() {
	local base=$1 now=$2 n=$3 id
	shift 3
	: >"$SIM_TMP/planned.json"
	for id in "$@"; do
		ctl "$n" --json job loads "$id" >>"$SIM_TMP/planned.json" ||
			fail "job loads $id: $(cat "$SIM_TMP/planned.json")"
	done
	python3 - "$base.lft" "$now.lft" "$SIM_TMP/planned.json" <<'PY' || fail "$now: the tables are not the base with the jobs' entries"
import json, sys
def entries(path):
    out = {}
    for line in open(path):
        g, lid, port = line.split()
        out[(int(g, 16), int(lid))] = int(port)
    return out
base, now = entries(sys.argv[1]), entries(sys.argv[2])
want = dict(base)
n_e = 0
dec = json.JSONDecoder()
text = open(sys.argv[3]).read()
pos = 0
while pos < len(text.rstrip()):
    doc, pos = dec.raw_decode(text, pos)
    while pos < len(text) and text[pos].isspace():
        pos += 1
    for e in doc["jobs"][0]["lft_entries"]:
        want[(int(e["switch"], 16), e["lid"])] = e["port"]
        n_e += 1
diff = [(k, want.get(k), now.get(k)) for k in sorted(set(want) | set(now)) if want.get(k) != now.get(k)]
for k, w, h in diff[:5]:
    print("switch 0x%016x LID %d: planned %s, dumped %s" % (k[0], k[1], w, h), file=sys.stderr)
changed = sum(1 for k in now if base.get(k) != now[k])
print("%d planned entries, %d entries differ from the base" % (n_e, changed))
sys.exit(1 if diff else 0)
PY
}

# loads_match PREFIX NAME JOB...: job_loads.py on PREFIX's dumps gives each
# job (ID:PATTERN:NAMES) the max_load ibsmd's job loads reports
loads_match() {
	local prefix=$1 n=$2 spec id mine theirs
	shift 2
	python3 "$JOB_LOADS" "$prefix.topo" "$prefix.lfts" "$@" >"$prefix.jl" ||
		fail "job_loads.py: $(cat "$prefix.jl")"
	for spec in "$@"; do
		id=${spec%%:*}
		mine=$(awk -v i="$id" '$1 == i { print $3 }' "$prefix.jl")
		theirs=$(job_field "$n" "$id" max_load)
		python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-9)' \
			"$mine" "$theirs" ||
			fail "job $id: the dumped tables give max load $mine, job loads says $theirs"
		printf '%s=%s ' "$id" "$mine"
	done
}

# names H N...: H-N,H-M,... for job_loads.py
names() { local h=$1; shift; local IFS=,; echo "${*/#/$h-}"; }

# same_jobs NAME WHAT: after WHAT, jobs A and B ready on NAME, the tables
# those dumped with the jobs ($SIM_TMP/jobs), the loads the dumps' (printed)
same_jobs() {
	wait_until 10 all_ready "$1" A B || fail "after the $2: $(ctl "$1" job list)"
	lids_tables "$SIM_TMP/$2"
	same_as "$SIM_TMP/jobs" "$SIM_TMP/$2" "$2"
	loads_match "$SIM_TMP/$2" "$1" "$A" "$B"
}

# jobs_scenario XGFT_ARGS A_PATTERN "A_NODES" B_PATTERN "B_NODES" [HOOK]:
# on `fabgen xgft XGFT_ARGS`, ibsmd "one" (H-0) starts job A (host numbers
# A_NODES in rank order, given as a bracketed host list) and job B with
# --wait: the tables are the base's with exactly the planned entries and
# the loads are job_loads.py's; HOOK runs then; a restart and a failover
# to "two" (H-1, same state directory) keep both ready and the tables; job
# end A leaves B's entries alone, job end B the base tables.
jobs_scenario() {
	local xgft=$1 apat=$2 bpat=$4 hook=${6:-} got loads A B an bn
	read -ra an <<<"$3"
	read -ra bn <<<"$5"
	# shellcheck disable=SC2086 # the generator's arguments
	gen xgft $xgft -o "$SIM_TMP/xgft.net"
	sim_start "$SIM_TMP/xgft.net"
	A="A:$apat:$(names H "${an[@]}")"
	B="B:$bpat:$(names H "${bn[@]}")"
	start_sm one H-0 10
	wait_up 60 "$SIM_TMP/one.log" "(first master)"
	lids_tables "$SIM_TMP/base"
	ctl one job start A --nodes "H-[$(IFS=,; echo "${an[*]}")]" --pattern "$apat" \
		--wait --timeout 20 >"$SIM_TMP/a.out" 2>&1 || fail "job start A: $(cat "$SIM_TMP/a.out")"
	[ "$(cat "$SIM_TMP/a.out")" = ready ] || fail "job start A --wait printed $(cat "$SIM_TMP/a.out")"
	ctl one job start B --nodes "$(names H "${bn[@]}")" --pattern "$bpat" --wait \
		>"$SIM_TMP/b.out" 2>&1 || fail "job start B: $(cat "$SIM_TMP/b.out")"
	all_ready one A B || fail "job list: $(ctl one job list)"
	[ "$(job_field one A entries)" -gt 0 ] || [ "$(job_field one B entries)" -gt 0 ] ||
		fail "neither job left D-mod-K: the test shows nothing"
	lids_tables "$SIM_TMP/jobs"
	got=$(planned "$SIM_TMP/base" "$SIM_TMP/jobs" one A B) || exit 1
	loads=$(loads_match "$SIM_TMP/jobs" one "$A" "$B") || exit 1
	pass "two jobs ready: $got; loads from the dumps $loads(D-mod-K: A=$(job_field one A dmodk_max_load) B=$(job_field one B dmodk_max_load))"
	[ -n "$hook" ] && "$hook"

	kill -TERM "${PID[one]}"
	wait_pid "${PID[one]}" 5 || fail "ibsmd did not stop"
	start_sm one H-0 10
	wait_up 60 "$SIM_TMP/one.log" "(restart)"
	loads=$(same_jobs one restart) || exit 1
	pass "restart: both jobs ready again, tables unchanged, loads $loads"

	start_sm two H-1 1
	wait_until 20 grep -q 'STANDBY' "$SIM_TMP/two.log" ||
		fail "no standby: $(tail -n 3 "$SIM_TMP/two.log")"
	ctl two job start X --nodes H-9 >"$SIM_TMP/x.out" 2>&1 && fail "a standby started a job"
	grep -q 'not the master' "$SIM_TMP/x.out" || fail "standby: $(cat "$SIM_TMP/x.out")"
	kill -KILL "${PID[one]}"
	wait_pid "${PID[one]}" 5 2>/dev/null
	wait_up 60 "$SIM_TMP/two.log" "(failover)"
	loads=$(same_jobs two failover) || exit 1
	pass "failover: the standby re-applied both jobs, tables unchanged, loads $loads"

	ctl two job end A >"$SIM_TMP/e.out" 2>&1 || fail "job end A: $(cat "$SIM_TMP/e.out")"
	lids_tables "$SIM_TMP/end-a"
	got=$(planned "$SIM_TMP/base" "$SIM_TMP/end-a" two B) || exit 1
	ctl two job end B >"$SIM_TMP/e.out" 2>&1 || fail "job end B: $(cat "$SIM_TMP/e.out")"
	lids_tables "$SIM_TMP/end"
	same_as "$SIM_TMP/base" "$SIM_TMP/end" "job end"
	[ "$(status_field "$SIM_TMP/two.sock" jobs.max_link_load)" = 0.0 ] ||
		fail "load left after the ends"
	pass "job end A: B's entries alone ($got); job end B: the base tables byte for byte, no load left"
}
