# shellcheck shell=bash
# tests/sim/slurm_lib.sh: a real Slurm on this machine for a test (source
# it after lib.sh or common.sh).  Debian's slurmctld and 12 slurmd
# (`slurmd -N H-i`, nodes H-0..H-11 on ports 17000-17011 of 127.0.0.1) and
# a munged with its own key and socket, all in $SIM_TMP/slurm and inside a
# network namespace of their own with only `lo` up: Slurm binds 0.0.0.0 and
# fixed ports, so tests running side by side (and a site's Slurm) never
# meet.  The test itself stays outside; `slurm CMD...` runs a Slurm client
# (sbatch, squeue, scancel, scontrol, sinfo) inside.  Files and Unix sockets
# that are files (munged's, ibsmd's control socket) are reached from both
# sides; ibsim's are abstract Unix sockets, which belong to a network
# namespace: ibsim, ibsmd and infiniband-diags stay outside with the test,
# and a job inside cannot reach the simulated fabric.
#
#     slurm_start PROLOG EPILOG   # PrologSlurmctld / EpilogSlurmctld; up, nodes idle
#     id=$(slurm_submit -N 4 --wrap 'sleep 5')
#     slurm_wait_state "$id" RUNNING 10
#     slurm scancel "$id"
#
# Everything is stopped by lib.sh's EXIT trap (bg_register).  DEVELOPERS.md,
# "Slurm on one machine", says what it costs.

SLURM_DIR="$SIM_TMP/slurm"
SLURM_CONF="$SLURM_DIR/slurm.conf"
SLURM_NODES=${SLURM_NODES:-12}
SLURM_PORT0=17000
SLURM_NS_PID=
SLURM_PIDS=()

# slurm CMD...: a command inside Slurm's network namespace, with its config
slurm() {
	nsenter --net="/proc/$SLURM_NS_PID/ns/net" env SLURM_CONF="$SLURM_CONF" "$@"
}

# slurm__bg NAME CMD...: a daemon inside the namespace, in the foreground
# of a background job of ours (nsenter execs it: the pid is the daemon's),
# its output in $SLURM_DIR/log/NAME.out
slurm__bg() {
	local name=$1
	shift
	nsenter --net="/proc/$SLURM_NS_PID/ns/net" env SLURM_CONF="$SLURM_CONF" "$@" \
		>"$SLURM_DIR/log/$name.out" 2>&1 &
	SLURM_PIDS+=("$!")
	bg_register "$!"
}

# slurm__conf PROLOG EPILOG: the slurm.conf, everything under $SLURM_DIR
slurm__conf() {
	local host
	host=$(hostname -s)
	cat >"$SLURM_CONF" <<EOF
ClusterName=ibsmdtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/run/munge.sock
# Slurm resolves 127.0.0.1 with AI_ADDRCONFIG, which fails when lo is the
# only interface up -- unless IPv6 is enabled.
CommunicationParameters=EnableIPv6
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/run/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/linear
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=1
MinJobAge=600
PrologSlurmctld=$1
EpilogSlurmctld=$2
NodeName=H-[0-$((SLURM_NODES - 1))] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$SLURM_PORT0-$((SLURM_PORT0 + SLURM_NODES - 1))] CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

# slurm__idle: every node idle
slurm__idle() {
	local states
	states=$(slurm sinfo -h -N -o '%t' 2>/dev/null) || return 1
	[ "$(grep -c '^idle$' <<<"$states")" = "$SLURM_NODES" ]
}

# slurm_start PROLOG EPILOG: munged, slurmctld and the slurmd, until every
# node is idle (about 1 s); fails with the logs' tails otherwise
slurm_start() {
	local i
	if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
		fail "slurm_start: slurmctld or munged missing: run make deps"
	fi
	mkdir -p "$SLURM_DIR"/{run,log,state,spool}
	slurm__conf "$1" "$2"
	# the namespace: a process that only holds it, lo up
	unshare --net sh -c 'ip link set lo up && exec sleep infinity' &
	SLURM_NS_PID=$!
	bg_register "$SLURM_NS_PID"
	wait_until 5 slurm__lo_up || fail "slurm_start: no network namespace with lo up"
	head -c 1024 /dev/urandom >"$SLURM_DIR/munge.key"
	chmod 600 "$SLURM_DIR/munge.key"
	# -f: munged refuses a key and socket under /tmp otherwise
	slurm__bg munged munged -F -f -S "$SLURM_DIR/run/munge.sock" \
		--key-file="$SLURM_DIR/munge.key" --log-file="$SLURM_DIR/log/munged.log" \
		--pid-file="$SLURM_DIR/run/munged.pid" --seed-file="$SLURM_DIR/run/munged.seed"
	wait_until 5 test -S "$SLURM_DIR/run/munge.sock" ||
		fail "slurm_start: munged: $(tail -n 3 "$SLURM_DIR/log/munged.out")"
	slurm__bg slurmctld slurmctld -D -f "$SLURM_CONF"
	for ((i = 0; i < SLURM_NODES; i++)); do
		slurm__bg "slurmd-H-$i" slurmd -D -f "$SLURM_CONF" -N "H-$i"
	done
	wait_until 10 slurm__idle || {
		slurm sinfo -N >&2
		tail -n 5 "$SLURM_DIR/log/slurmctld.log" >&2
		fail "slurm_start: the nodes are not idle"
	}
}

# slurm__lo_up: the holder has left our namespace and lo is up in its own
slurm__lo_up() {
	[ "$(readlink "/proc/$SLURM_NS_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] &&
		slurm ip -o link show lo 2>/dev/null | grep -q '[<,]UP[,>]'
}

# slurm__sweep_ns: what slurmd started (slurmstepd, job scripts) outlives
# it; every process still in Slurm's network namespace but its holder is
# killed (the holder last, by the caller)
slurm__sweep_ns() {
	local ns p left=()
	[ -n "$SLURM_NS_PID" ] || return 0
	ns=$(readlink "/proc/$SLURM_NS_PID/ns/net" 2>/dev/null) || return 0
	[ "$ns" != "$(readlink /proc/self/ns/net)" ] || return 0
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" != "$SLURM_NS_PID" ] && [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$ns" ] &&
			left+=("$p")
	done
	[ "${#left[@]}" -eq 0 ] || kill -KILL "${left[@]}" 2>/dev/null
	return 0
}
SIM_CLEANUP_HOOKS+=(slurm__sweep_ns)

# slurm_stop: every Slurm daemon and munged, TERM to all at once, then
# KILL to any left after 5 s (the EXIT trap would stop them one by one;
# a test calls this to time it or to go on without Slurm)
slurm_stop() {
	local pid
	kill -TERM "${SLURM_PIDS[@]}" 2>/dev/null
	for pid in "${SLURM_PIDS[@]}"; do
		sim__stop_pid "$pid"
	done
	SLURM_PIDS=()
	slurm__sweep_ns
	sim__stop_pid "$SLURM_NS_PID"
}

# slurm_submit SBATCH-ARGS...: submit a batch job; prints its id
slurm_submit() {
	local out
	out=$(slurm sbatch --parsable -o /dev/null "$@" 2>&1) || fail "sbatch $*: $out"
	printf '%s\n' "${out%%;*}"
}

# slurm_job_field ID FIELD: a field of `scontrol show job ID` (JobState, NodeList, ...)
slurm_job_field() {
	slurm scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}

slurm__state_is() {
	[ "$(slurm_job_field "$1" JobState)" = "$2" ]
}

# slurm_wait_state ID STATE SECONDS: wait until job ID is in STATE
# (PENDING, CONFIGURING, RUNNING, COMPLETED, CANCELLED, ...); fails otherwise
slurm_wait_state() {
	wait_until "$3" slurm__state_is "$1" "$2" ||
		fail "job $1 not $2 after $3 s: $(slurm scontrol -o show job "$1" 2>&1 | cut -c1-300)"
}
