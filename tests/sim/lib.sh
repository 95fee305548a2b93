# tests/sim/lib.sh: helpers for ibsim end-to-end tests.  Source it:
#
#     . "$(dirname "$0")/lib.sh"
#     sim_start "$SIM_TMP/fabric.net"
#     on_host H-0 opensm -o ...        # a client attached at node "H-0"
#     sim_cmd 'Unlink "L0-S3"[20]'
#     pass "what was shown"
#
# Sourcing creates a per-test temp dir ($SIM_TMP) and an EXIT trap that
# stops every process the test started (ibsim, and anything registered
# with bg_register or started with on_host_bg), even on failure.  The temp
# dir is removed when the test exits 0, kept otherwise (or with
# SIM_KEEP_TMP=1).
#
# ibsim limits worth remembering: at most 10 clients attached at once; a
# client attaches to the first port of its node; the fake sysfs of a client
# is a snapshot taken when it starts.

# shellcheck disable=SC2034 # variables for the tests that source this file
SIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIM_TEST=${SIM_TEST:-$(basename "$0" .sh)}
SIM_FABGEN="$SIM_ROOT/tests/gen/fabgen.py"
SIM_CHECK="$SIM_ROOT/tests/sim/check_fabric.py"
SIM_MADDROP="$SIM_ROOT/build/libmaddrop.so"
SIM_START_TIMEOUT=${SIM_START_TIMEOUT:-300}
SIM_CMD_TIMEOUT=${SIM_CMD_TIMEOUT:-60}
SIM_DIAG_HOST=${SIM_DIAG_HOST:-H-0}

if [ -z "${UMAD2SIM:-}" ]; then
	for UMAD2SIM in /usr/lib/*/umad2sim/libumad2sim.so \
	    /usr/lib/umad2sim/libumad2sim.so /usr/lib64/umad2sim/libumad2sim.so; do
		[ -e "$UMAD2SIM" ] && break
	done
fi

SIM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ibsmd-$SIM_TEST.XXXXXX") || {
	echo "FAIL: $SIM_TEST: cannot create a temp dir" >&2
	exit 1
}
SIM_PID=
SIM_FD=
SIM_LOG=
SIM_BG_PIDS=()
SIM_CLEANUP_HOOKS=()	# functions the EXIT trap calls first (a library's own stops)
SIM_LAST_PID=

# fail MSG: report a failure and end the test (the EXIT trap cleans up).
fail() {
	echo "FAIL: $SIM_TEST: $*" >&2
	exit 1
}

# pass MSG: report one passed check; the test goes on.
pass() {
	echo "PASS: $SIM_TEST: $*"
}

# note MSG: informational output.
note() {
	echo "  $SIM_TEST: $*"
}

# bg_register PID...: kill these processes at cleanup.
bg_register() {
	SIM_BG_PIDS+=("$@")
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_until() {
	local limit=$1 start
	shift
	start=$SECONDS
	until "$@"; do
		[ $((SECONDS - start)) -ge "$limit" ] && return 1
		sleep 0.1
	done
}

# wait_pid PID SECONDS: wait until PID is gone; 1 if it is still there.
wait_pid() {
	wait_until "$2" sim__gone "$1"
}

sim__gone() {
	! kill -0 "$1" 2>/dev/null
}

sim__stop_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_pid "$pid" 5; then
		kill -KILL "$pid" 2>/dev/null || true
		wait_pid "$pid" 5 || true
	fi
}

sim__cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	for i in "${SIM_CLEANUP_HOOKS[@]}"; do
		"$i"
	done
	for ((i = ${#SIM_BG_PIDS[@]} - 1; i >= 0; i--)); do
		sim__stop_pid "${SIM_BG_PIDS[i]}"
	done
	sim_stop
	if [ "$rc" -eq 0 ] && [ -z "${SIM_KEEP_TMP:-}" ]; then
		rm -rf "$SIM_TMP"
	else
		echo "  $SIM_TEST: exit $rc, files kept in $SIM_TMP" >&2
	fi
	exit "$rc"
}
trap sim__cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# sim_counts NETFILE: prints "nodes switches ports" of an ibsim net file.
sim_counts() {
	awk '/^Switch/ { n++; s++; p += sim_ports($0) + 1 }
	     /^(Hca|Ca|Rt)/ { n++; p += sim_ports($0) }
	     function sim_ports(line) {
		     sub(/^[A-Za-z]+[ \t]*/, "", line)
		     return line + 0
	     }
	     END { print n + 0, s + 0, p + 0 }' "$1"
}

sim__max() {
	if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi
}

sim__prompts() {
	{ grep -o 'sim> ' "$SIM_LOG" 2>/dev/null || true; } | wc -l
}

sim__ready() {
	grep -q "Network simulator ready" "$SIM_LOG" 2>/dev/null
}

# sim_start NETFILE [IBSIM ARGS...]: start a private ibsim on NETFILE.
# Exports IBSIM_SOCKNAME; the console reads from a FIFO (see sim_cmd); the
# log is $SIM_LOG.  Node/switch/port limits are raised from the file.
sim_start() {
	local net=$1 counts nodes switches ports fifo
	shift
	[ -n "$SIM_PID" ] && fail "sim_start: ibsim already running"
	[ -r "$net" ] || fail "sim_start: cannot read $net"
	[ -e "$UMAD2SIM" ] || fail "sim_start: libumad2sim.so not found"
	net=$(realpath -- "$net")
	counts=$(sim_counts "$net")
	read -r nodes switches ports <<<"$counts"
	nodes=$(sim__max $((nodes + 16)) 2048)
	switches=$(sim__max $((switches + 16)) 256)
	ports=$(sim__max $((ports + 256)) 13312)
	export IBSIM_SOCKNAME="ibsmd-$$-$RANDOM"
	fifo="$SIM_TMP/ibsim.console"
	SIM_LOG="$SIM_TMP/ibsim.log"
	rm -f "$fifo"
	mkfifo "$fifo" || fail "sim_start: mkfifo $fifo"
	# Read-write open: neither side blocks, and ibsim never sees EOF.
	exec {SIM_FD}<>"$fifo"
	(cd "$SIM_TMP" && unset LD_PRELOAD &&
		exec ibsim -s -L 49152 -N "$nodes" -S "$switches" -P "$ports" \
		"$@" "$net" <"$fifo" >"$SIM_LOG" 2>&1 {SIM_FD}>&-) &
	SIM_PID=$!
	if ! wait_until "$SIM_START_TIMEOUT" sim__ready; then
		tail -n 5 "$SIM_LOG" >&2
		fail "sim_start: ibsim not ready after ${SIM_START_TIMEOUT}s"
	fi
	kill -0 "$SIM_PID" 2>/dev/null || {
		tail -n 5 "$SIM_LOG" >&2
		fail "sim_start: ibsim exited"
	}
	wait_until "$SIM_CMD_TIMEOUT" sim__has_prompt ||
		fail "sim_start: no ibsim console prompt"
}

# sim_alive: is the simulator still running?
sim_alive() {
	[ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null
}

sim__has_prompt() {
	[ "$(sim__prompts)" -ge 1 ]
}

sim__prompted() {
	[ "$(sim__prompts)" -gt "$1" ] || ! kill -0 "$SIM_PID" 2>/dev/null
}

# sim_cmd 'COMMAND': run one ibsim console command, wait until it was
# processed (the next prompt) and print what it printed.
sim_cmd() {
	local before offset
	[ -n "$SIM_PID" ] || fail "sim_cmd: ibsim is not running"
	before=$(sim__prompts)
	offset=$(stat -c %s "$SIM_LOG")
	printf '%s\n' "$*" >&"$SIM_FD"
	wait_until "$SIM_CMD_TIMEOUT" sim__prompted "$before" ||
		fail "sim_cmd: no answer to '$*'"
	tail -c +"$((offset + 1))" "$SIM_LOG" | sed 's/sim> //g'
}

# sim_stop: quit ibsim (the EXIT trap calls it too).
sim_stop() {
	local rc=0
	[ -n "$SIM_PID" ] || return 0
	if kill -0 "$SIM_PID" 2>/dev/null; then
		{ printf 'Quit\n' >&"$SIM_FD"; } 2>/dev/null || true
		wait_pid "$SIM_PID" 5 || sim__stop_pid "$SIM_PID"
		wait "$SIM_PID" 2>/dev/null || true
	else
		wait "$SIM_PID" 2>/dev/null || rc=$?
		echo "  $SIM_TEST: ibsim had exited on its own, status $rc" \
			"(>128: signal N-128)" >&2
	fi
	exec {SIM_FD}>&-
	SIM_PID=
	SIM_FD=
}

# sim__libasan BINARY: the path of the libasan BINARY is linked with, if any.
sim__libasan() {
	local path out line
	path=$(command -v -- "$1" 2>/dev/null) || path=$1
	out=$(ldd "$path" 2>/dev/null) || return 0
	while read -r line; do
		case $line in
		libasan.so*"=> "/*)
			line=${line#*=> }
			printf '%s\n' "${line%% *}"
			return 0
			;;
		esac
	done <<<"$out"
}

# sim_preload BINARY [SO...]: print the LD_PRELOAD value for a client:
# libasan first when BINARY is linked with it, then the SOs given and those
# in $SIM_EXTRA_PRELOAD (e.g. $SIM_MADDROP), then libumad2sim.so.
sim_preload() {
	local bin=$1 asan list="" so
	shift
	asan=$(sim__libasan "$bin")
	for so in $asan "$@" ${SIM_EXTRA_PRELOAD:-} "$UMAD2SIM"; do
		list="${list:+$list }$so"
	done
	printf '%s\n' "$list"
}

# umad2sim's read() memcpy()s past the end of its own heap buffer: an ASan
# client must not report that (nor umad2sim's leaks).
printf 'interceptor_via_lib:libumad2sim.so\n' >"$SIM_TMP/asan.supp"
printf 'leak:libumad2sim.so\n' >"$SIM_TMP/lsan.supp"

# sim_asan_options BINARY: print the ASAN_OPTIONS for BINARY (the caller's,
# plus the umad2sim suppressions when BINARY is linked with libasan).
sim_asan_options() {
	if [ -n "$(sim__libasan "$1")" ]; then
		printf '%s\n' "${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$SIM_TMP/asan.supp"
	else
		printf '%s\n' "${ASAN_OPTIONS:-}"
	fi
}

# sim_env BINARY [SO...]: export LD_PRELOAD (and ASAN_OPTIONS/LSAN_OPTIONS
# for an ASan build) for BINARY into this shell (use it in a subshell).
sim_env() {
	LD_PRELOAD=$(sim_preload "$@")
	ASAN_OPTIONS=$(sim_asan_options "$1")
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$SIM_TMP/lsan.supp"
	export LD_PRELOAD ASAN_OPTIONS LSAN_OPTIONS
}

sim__resolve() {
	case $1 in
	*/*) realpath -- "$1" ;;
	*) command -v -- "$1" || echo "$1" ;;
	esac
}

# on_host NAME CMD...: run CMD as an ibsim client attached at node NAME,
# in $SIM_TMP (umad2sim writes ./sys-<pid> there).  A tool that is not the
# project's (infiniband-diags, OpenSM's) and dies of SIGSEGV is run once
# more, saying so on stderr: umad2sim's receiver thread crashes when a MAD
# reaches a new process before its agents are registered (DEVELOPERS.md,
# "umad2sim routes incoming MADs by management class only").  A crash of
# the project's own programs is never retried.
on_host() {
	local host=$1 bin rc
	shift
	bin=$(sim__resolve "$1")
	shift
	(cd "$SIM_TMP" && sim_env "$bin" && SIM_HOST=$host exec "$bin" "$@")
	rc=$?
	case $bin in
	"$SIM_ROOT"/*) return "$rc" ;;
	esac
	[ "$rc" = 139 ] || return "$rc"
	echo "lib.sh: $(basename "$bin") crashed under umad2sim (SIGSEGV) on $host; running it once more" >&2
	(cd "$SIM_TMP" && sim_env "$bin" && SIM_HOST=$host exec "$bin" "$@")
}

# on_host_bg NAME CMD...: like on_host, in the background; the pid is in
# $SIM_LAST_PID and is killed at cleanup.  Redirect its output at the call.
on_host_bg() {
	local host=$1 bin
	shift
	bin=$(sim__resolve "$1")
	shift
	(cd "$SIM_TMP" && sim_env "$bin" && SIM_HOST=$host exec "$bin" "$@") &
	SIM_LAST_PID=$!
	bg_register "$SIM_LAST_PID"
}

# sim_dump PREFIX [HOST]: infiniband-diags view of the fabric, as seen from
# HOST (default $SIM_DIAG_HOST): PREFIX.topo (ibnetdiscover), PREFIX.links
# (iblinkinfo --line), PREFIX.lfts (dump_fts -n).  These are the inputs of
# check_fabric.py.
sim_dump() {
	local prefix=$1 host=${2:-$SIM_DIAG_HOST}
	on_host "$host" ibnetdiscover >"$prefix.topo" 2>"$prefix.err" &&
	on_host "$host" iblinkinfo --line >"$prefix.links" 2>>"$prefix.err" &&
	on_host "$host" dump_fts -n >"$prefix.lfts" 2>>"$prefix.err"
}

# sim_check PREFIX [check_fabric.py options]: run the checker on a dump.
sim_check() {
	local prefix=$1
	shift
	python3 "$SIM_CHECK" --topo "$prefix.topo" --links "$prefix.links" \
		--lfts "$prefix.lfts" "$@"
}
