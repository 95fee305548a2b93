#!/bin/bash
# etc/slurm's PrologSlurmctld and EpilogSlurmctld under a real Slurm
# (slurm_lib.sh: slurmctld, 12 slurmd, munged, in a network namespace).
#
# Then with ibsmd on an ibsim XGFT(3;2,2,4;1,2,2) (16 hosts H-0..H-15,
# routing dmodk with jobs least-max-load; the Slurm nodes are its hosts
# H-0..H-11) and the scripts' default pattern, 3dnn, on node sets where
# D-mod-K loads a link 2.0 and job routing 1.0: while `sbatch -N 4` runs,
# `ibsmctl job list` has it ready and dump_fts shows the base tables with
# exactly its planned entries (at least one moved), job_loads.py on the
# dump gives the max load `job loads` reports, below D-mod-K's; after its
# epilog dump_fts equals the base tables.  The same for two jobs running
# at once, and for a job cancelled while it runs; the epilog of a job
# ibsmd does not have is no failure.
#
# First with a recording stand-in for ibsmctl (fake_ibsmctl.sh), no daemon:
# for `sbatch -N 4` the prolog runs `job start ID --nodes NODELIST` with the
# job's id and nodes, the pattern and timeout of the site's file and its
# socket, and the job starts only after "ready"; the epilog runs `job end
# ID` after it; two jobs at once each get their own nodes; a cancelled
# job's epilog runs; a refused `job start` leaves the job running (logged),
# unless IBSMD_JOB_STRICT=1, when Slurm requeues it instead.  By hand, no
# Slurm: the defaults (3dnn, 30 s, ibsmctl's own socket) with no PATH, the
# environment over the site's file, a hung ibsmctl killed after the timeout.
. "$(dirname "$0")/jobs_lib.sh"
. "$(dirname "$0")/slurm_lib.sh"

fake="$SIM_TMP/fake"
calls="$fake/calls"
conf="$SIM_TMP/slurm.env"
slog="$SIM_TMP/scripts.log"
prolog="$SIM_ROOT/etc/slurm/ibsmd-prolog"
epilog="$SIM_ROOT/etc/slurm/ibsmd-epilog"
fakectl="$SIM_ROOT/tests/sim/fake_ibsmctl.sh"
mkdir -p "$fake" "$SIM_TMP/ran"

# bare CMD...: CMD in the environment slurmctld gives its scripts
# (SLURM_* only, no PATH), the site's file $SIM_TMP/bare.env
printf 'IBSMCTL=%s\nIBSMD_SLURM_LOG=%s\nexport FAKE_IBSMCTL_DIR=%s\n' "$fakectl" "$slog" "$fake" \
	>"$SIM_TMP/bare.env"
bare() {
	env -i IBSMD_SLURM_ENV="$SIM_TMP/bare.env" SLURM_JOB_ID=77 SLURM_JOB_NODELIST='H-[1-2]' "$@"
}
bare /bin/sh "$prolog" 2>/dev/null || fail "the prolog by hand failed"
[ "$(cut -d' ' -f2- "$calls")" = "job start 77 --nodes H-[1-2] --pattern 3dnn --wait --timeout 30" ] ||
	fail "the prolog's defaults: $(cat "$calls")"
bare IBSMCTL=/nonexistent IBSMD_SOCKET=/x.sock "$epilog" 2>/dev/null || fail "the epilog by hand failed"
grep -qF "ibsmd-epilog: job 77: ibsmctl job end: " "$slog" ||
	fail "the environment's IBSMCTL over the file's: $(cat "$calls")"
bare IBSMD_JOB_PATTERN=alltoall IBSMD_SOCKET=/x.sock "$prolog" 2>/dev/null || fail "the prolog by hand failed"
[ "$(sed -n 2p "$calls" | cut -d' ' -f2-)" = \
	"-s /x.sock job start 77 --nodes H-[1-2] --pattern alltoall --wait --timeout 30" ] ||
	fail "the environment over the file: $(sed -n 2p "$calls")"
start=$SECONDS
bare IBSMD_JOB_TIMEOUT=1 FAKE_IBSMCTL_DELAY=60 "$prolog" 2>/dev/null ||
	fail "the prolog failed on a hung ibsmctl"
[ $((SECONDS - start)) -lt 15 ] || fail "the prolog waited $((SECONDS - start)) s for a hung ibsmctl"
grep -qF 'ibsmd-prolog: job 77: ibsmctl job start: exit 124' "$slog" &&
	grep -qF 'ibsmd-prolog: job 77: runs on the base routes' "$slog" ||
	fail "a hung ibsmctl, logged: $(cat "$slog")"
printf 'IBSMD_JOB_PATTERN=ring\nif then\n' >"$SIM_TMP/broken.env"
: >"$calls"
env -i IBSMD_SLURM_ENV="$SIM_TMP/broken.env" IBSMD_SLURM_LOG="$slog" IBSMD_JOB_TIMEOUT=soon \
	IBSMCTL="$fakectl" FAKE_IBSMCTL_DIR="$fake" SLURM_JOB_ID=78 SLURM_JOB_NODELIST='H-[1-2]' \
	"$prolog" 2>/dev/null || fail "the prolog failed on a broken settings file"
grep -qF "ibsmd-prolog: $SIM_TMP/broken.env not read: " "$slog" &&
	grep -qF "ibsmd-prolog: IBSMD_JOB_TIMEOUT=soon is not a number of seconds: 30 used" "$slog" &&
	[ "$(cut -d' ' -f2- "$calls")" = "job start 78 --nodes H-[1-2] --pattern 3dnn --wait --timeout 30" ] ||
	fail "a broken settings file: $(cat "$slog" "$calls")"
rm -f "$calls" "$slog"
pass "by hand: the defaults with no PATH (3dnn, 30 s, ibsmctl's socket), the environment over the file, a hung ibsmctl killed (logged), a settings file sh cannot parse and a timeout not a number (logged, defaults used)"

# env_file [STRICT]: the site's file the scripts read under Slurm
env_file() {
	cat >"$conf" <<EOF
IBSMCTL=$fakectl
IBSMD_SOCKET=$SIM_TMP/ctl.sock
IBSMD_JOB_PATTERN=ring
IBSMD_JOB_TIMEOUT=7
IBSMD_JOB_STRICT=${1:-0}
IBSMD_SLURM_LOG=$slog
export FAKE_IBSMCTL_DIR=$fake FAKE_IBSMCTL_DELAY=1
EOF
}
env_file
# slurmctld gives the scripts no environment of its own: a site's
# wrapper names the file
for s in prolog epilog; do
	printf '#!/bin/sh\nIBSMD_SLURM_ENV=%s exec %s\n' "$conf" "$SIM_ROOT/etc/slurm/ibsmd-$s" \
		>"$SIM_TMP/$s"
	chmod +x "$SIM_TMP/$s"
done

start=$SECONDS
slurm_start "$SIM_TMP/prolog" "$SIM_TMP/epilog"
note "Slurm up, 12 nodes idle, in $((SECONDS - start)) s"

# job CMD SBATCH-ARGS...: a job that notes when it started, then runs CMD
job() {
	local cmd=$1
	shift
	slurm_submit "$@" --wrap "date +%s.%N >$SIM_TMP/ran/\$SLURM_JOB_ID; $cmd"
}
# held SBATCH-ARGS...: a job that runs until the test releases it
mkdir -p "$SIM_TMP/release"
held() {
	job "until [ -e $SIM_TMP/release/\$SLURM_JOB_ID ]; do sleep 0.1; done" "$@"
}
release() { touch "$SIM_TMP/release/$1"; }
# call_of ID WHAT: the stand-in's line for job ID's `job WHAT`, without its time
call_of() {
	grep -E " job $2 $1( |\$)" "$calls" | cut -d' ' -f2-
}
# time_of ID WHAT: its time
time_of() {
	grep -E " job $2 $1( |\$)" "$calls" | cut -d' ' -f1
}
# hosts NODELIST: one host a line, sorted
hosts() {
	slurm scontrol show hostnames "$1" | sort
}
# started_as ID: the prolog's call for job ID is what it must be, the job
# ran after the stand-in's "ready" (1 s after its call), and it is logged
started_as() {
	local nodes want
	nodes=$(slurm_job_field "$1" NodeList)
	want="-s $SIM_TMP/ctl.sock job start $1 --nodes $nodes --pattern ring --wait --timeout 7"
	[ "$(call_of "$1" start)" = "$want" ] ||
		fail "job $1's prolog ran: '$(call_of "$1" start)', not '$want'"
	# RUNNING comes before the batch script's first line has written
	wait_until 5 test -s "$SIM_TMP/ran/$1" || fail "job $1 did not run"
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]) + 1)' \
		"$(cat "$SIM_TMP/ran/$1")" "$(time_of "$1" start)" &&
		fail "job $1 started before its prolog's ready"
	grep -qF "ibsmd-prolog: job $1 on $nodes: ready" "$slog" || fail "job $1: no ready in the log"
}
# ended_as ID: the epilog's call for job ID is there, and logged
ended_as() {
	[ "$(call_of "$1" end)" = "-s $SIM_TMP/ctl.sock job end $1" ] &&
		grep -qF "ibsmd-epilog: job $1: ended" "$slog"
}
# wait_ended ID: until ended_as ID, 5 s at most
wait_ended() {
	wait_until 5 ended_as "$1" || fail "job $1: no job end: '$(call_of "$1" end)'"
}

# sbatch -N 4
id=$(job 'sleep 1' -N 4) || exit 1
slurm_wait_state "$id" COMPLETED 15
[ "$(hosts "$(slurm_job_field "$id" NodeList)" | wc -l)" = 4 ] || fail "job $id: not 4 nodes"
started_as "$id"
wait_ended "$id"
pass "sbatch -N 4 (job $id on $(slurm_job_field "$id" NodeList)): prolog's job start, the job after ready, epilog's job end"

# two at once
a=$(held -N 4) || exit 1
b=$(held -N 4) || exit 1
slurm_wait_state "$a" RUNNING 10
slurm_wait_state "$b" RUNNING 10
[ -z "$(call_of "$a" end)$(call_of "$b" end)" ] || fail "an epilog ran while both jobs were running"
[ -z "$(comm -12 <(hosts "$(slurm_job_field "$a" NodeList)") <(hosts "$(slurm_job_field "$b" NodeList)"))" ] ||
	fail "jobs $a and $b share nodes"
started_as "$a"
started_as "$b"
release "$a"
release "$b"
slurm_wait_state "$a" COMPLETED 15
slurm_wait_state "$b" COMPLETED 15
wait_ended "$a"
wait_ended "$b"
pass "two jobs at once ($a, $b): each its own nodes in its job start, both running, then each job end"

# cancelled while running
c=$(held -N 4) || exit 1
slurm_wait_state "$c" RUNNING 10
started_as "$c"
slurm scancel "$c"
slurm_wait_state "$c" CANCELLED 10
wait_ended "$c"
pass "scancel of running job $c: its epilog's job end"

# the daemon refuses: the job runs on the base routes, the refusal logged
echo "no ibsmd on $SIM_TMP/ctl.sock" >"$fake/fail"
d=$(job 'sleep 1' -N 4) || exit 1
slurm_wait_state "$d" COMPLETED 15
[ -s "$SIM_TMP/ran/$d" ] || fail "job $d did not run after a refused job start"
wait_until 5 grep -q "ibsmd-epilog: job $d: its routes stay" "$slog" || fail "job $d: no epilog"
for want in "ibsmd-prolog: job $d: ibsmctl job start: no ibsmd on $SIM_TMP/ctl.sock" \
	"ibsmd-prolog: job $d: runs on the base routes" \
	"ibsmd-epilog: job $d: ibsmctl job end: no ibsmd on $SIM_TMP/ctl.sock"; do
	grep -qF "$want" "$slog" || fail "job $d: not logged: '$want': $(cat "$slog")"
done
pass "refused job start and end (job $d): the job ran, both refusals logged"

# IBSMD_JOB_STRICT=1: Slurm requeues it (held back a while), it has not run
env_file 1
e=$(job 'sleep 1' -N 4) || exit 1
requeued() { [ "$(slurm_job_field "$e" Restarts)" -ge 1 ] 2>/dev/null && slurm__state_is "$e" PENDING; }
wait_until 10 requeued ||
	fail "job $e not requeued: $(slurm_job_field "$e" JobState), $(slurm_job_field "$e" Restarts) restarts"
[ -e "$SIM_TMP/ran/$e" ] && fail "job $e ran after a refused job start, IBSMD_JOB_STRICT=1"
grep -qF "ibsmd-prolog: job $e: ibsmctl job start: no ibsmd" "$slog" || fail "job $e: the refusal is not logged"
grep -qF "ibsmd-prolog: job $e: runs on the base routes" "$slog" &&
	fail "job $e: logged as running on the base routes, IBSMD_JOB_STRICT=1"
pass "IBSMD_JOB_STRICT=1: job $e requeued, not run"
slurm scancel "$e"
slurm_wait_state "$e" CANCELLED 10

# The real ibsmd (jobs_lib.sh: "one" on H-0, its socket $SIM_TMP/one.sock)
gen xgft --m 2,2,4 --w 1,2,2 -o "$SIM_TMP/xgft.net"
sim_start "$SIM_TMP/xgft.net"
start_sm one H-0 10
wait_up 60 "$SIM_TMP/one.log" "from ibsmd"
lids_tables "$SIM_TMP/base"
cat >"$conf" <<EOF
IBSMCTL=$IBSMCTL
IBSMD_SOCKET=$SIM_TMP/one.sock
IBSMD_JOB_TIMEOUT=20
IBSMD_SLURM_LOG=$slog
EOF

# routed PREFIX ID...: the jobs ID... run, ibsmd has them ready (and only
# them), and the switches (dumped to PREFIX) hold the base tables with
# exactly their planned entries; each job moved an entry, and its max
# load from the dump (job_loads.py, 3dnn over its nodes in Slurm's order)
# is what job loads says, below D-mod-K's
routed() {
	local prefix=$1 id specs=() got loads
	shift
	for id in "$@"; do
		slurm_wait_state "$id" RUNNING 20
		grep -qF "ibsmd-prolog: job $id on $(slurm_job_field "$id" NodeList): ready" "$slog" ||
			fail "job $id runs, no ready in the log: $(tail -n 3 "$slog")"
		specs+=("$id:3dnn:$(hosts_in_order "$id")")
	done
	all_ready one "$@" || fail "job list, jobs $* running: $(ctl one job list)"
	lids_tables "$prefix"
	got=$(planned "$SIM_TMP/base" "$prefix" one "$@") || exit 1
	loads=$(loads_match "$prefix" one "${specs[@]}") || exit 1
	for id in "$@"; do
		[ "$(job_field one "$id" entries)" -ge 1 ] ||
			fail "job $id: no entry moved (D-mod-K kept): the test shows nothing"
		python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' \
			"$(job_field one "$id" max_load)" "$(job_field one "$id" dmodk_max_load)" ||
			fail "job $id: max load $(job_field one "$id" max_load), D-mod-K's $(job_field one "$id" dmodk_max_load)"
	done
	echo "$got; max loads from the dump $loads(D-mod-K's:$(for id in "$@"; do
		printf ' %s' "$(job_field one "$id" dmodk_max_load)"; done))"
}
# hosts_in_order ID: job ID's nodes in Slurm's order (its ranks), a,b,c
hosts_in_order() {
	slurm scontrol show hostnames "$(slurm_job_field "$1" NodeList)" | paste -sd,
}
# restored PREFIX ID...: the jobs' epilogs ran, ibsmd has no job, and the
# switches (dumped to PREFIX) hold the base tables
restored() {
	local prefix=$1 id
	shift
	for id in "$@"; do
		wait_until 10 grep -qF "ibsmd-epilog: job $id: ended" "$slog" ||
			fail "job $id: no epilog: $(tail -n 3 "$slog")"
	done
	all_ready one || fail "job list after the epilogs: $(ctl one job list)"
	lids_tables "$prefix"
	same_as "$SIM_TMP/base" "$prefix" "after the epilogs of $*"
}

f=$(held -N 4 -w 'H-[4,8-10]') || exit 1
got=$(routed "$SIM_TMP/run-f" "$f") || exit 1
release "$f"
slurm_wait_state "$f" COMPLETED 20
restored "$SIM_TMP/end-f" "$f"
pass "ibsmd, sbatch -N 4 (job $f on H-[4,8-10]): while it ran $got; after its epilog the base tables"

g=$(held -N 4 -w 'H-[4,6-7,10]') || exit 1
h=$(held -N 4 -w 'H-[5,8-9,11]') || exit 1
got=$(routed "$SIM_TMP/run-gh" "$g" "$h") || exit 1
release "$g"
release "$h"
slurm_wait_state "$g" COMPLETED 20
slurm_wait_state "$h" COMPLETED 20
restored "$SIM_TMP/end-gh" "$g" "$h"
pass "ibsmd, two jobs at once ($g on H-[4,6-7,10], $h on H-[5,8-9,11]): $got; after their epilogs the base tables"

k=$(held -N 4 -w 'H-[3,5,7,11]') || exit 1
got=$(routed "$SIM_TMP/run-k" "$k") || exit 1
slurm scancel "$k"
slurm_wait_state "$k" CANCELLED 10
restored "$SIM_TMP/end-k" "$k"
pass "ibsmd, job $k (H-[3,5,7,11]) cancelled while running: $got; after its epilog the base tables"

# the epilog of a job ibsmd does not have (its prolog failed, or it was
# ended by hand): nothing to end, no failure even with IBSMD_JOB_STRICT=1
env -i IBSMD_SLURM_ENV="$conf" IBSMD_JOB_STRICT=1 SLURM_JOB_ID="$k" "$epilog" 2>/dev/null ||
	fail "the epilog of job $k again: exit $?"
grep -qF "ibsmd-epilog: job $k: ibsmd has no such job, nothing to end" "$slog" ||
	fail "the epilog of job $k again: $(tail -n 2 "$slog")"
pass "ibsmd, the epilog of a job it does not have (job $k again, IBSMD_JOB_STRICT=1): exit 0, logged"

start=$SECONDS
slurm_stop
note "Slurm stopped in $((SECONDS - start)) s"
