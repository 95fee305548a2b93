#!/bin/bash
# The daemon's exit status (ibsmd(8), EXIT STATUS), on the emulator: a
# fatal stop exits non-zero, so that systemd's Restart=on-failure starts
# it again; a stop by SIGTERM or SIGINT exits 0.  The fatal stop here is
# virtualization.extended_lids: on against devices without the
# extension (the emulator's devices start without it): the first heavy
# sweep stops the daemon with 1; and a daemon out of descriptors, which
# stops with 71.  A few seconds, no ibsim.
. "$(dirname "$0")/common.sh"

net="$SIM_ROOT/etc/demo.net"
# start NAME [policy lines]: a daemon in the background, $pid
start() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$SIM_TMP/$name.yaml"
	"$IBSMD" --emulate "$net" -c "$SIM_TMP/$name.yaml" -s "$SIM_TMP/$name.sock" \
		-S "$SIM_TMP/$name.state" >"$SIM_TMP/$name.out" 2>"$SIM_TMP/$name.err" &
	pid=$!
	bg_register "$pid"
}
# ended PID: the daemon's exit status once it is gone (10 s at most)
ended() {
	wait_pid "$1" 10 || fail "the daemon did not end: $(tail -n 3 "$SIM_TMP/$2.err")"
	wait "$1"
}

start fatal 'virtualization:' '  extended_lids: on'
ended "$pid" fatal
rc=$?
grep -q 'extended_lids: on, but .* lack the extension' "$SIM_TMP/fatal.err" ||
	fail "no reason logged for the stop: $(tail -n 3 "$SIM_TMP/fatal.err")"
[ "$rc" -eq 1 ] || fail "a fatal stop in daemon mode exited $rc, not 1"
pass "a fatal stop (extended_lids: on, devices without the extension) exits 1: $(grep -o 'extended_lids: on, but [0-9]* devices lack' "$SIM_TMP/fatal.err")"

# Out of descriptors (a daemon held to 40, its control socket's clients
# taking the rest): the heavy sweep of a SIGHUP cannot start the routing
# thread (its eventfd) and stops the daemon with 71 (EX_OSERR).
printf 'sweep:\n  interval_s: 1\n' >"$SIM_TMP/fds.yaml"
(ulimit -n 40 && exec "$IBSMD" --emulate "$net" -c "$SIM_TMP/fds.yaml" -s "$SIM_TMP/fds.sock" \
	-S "$SIM_TMP/fds.state" >"$SIM_TMP/fds.out" 2>"$SIM_TMP/fds.err") &
pid=$!
bg_register "$pid"
up() { grep -qs '^subnet up:' "$SIM_TMP/fds.out"; }
wait_until 20 up || fail "the emulated daemon did not come up: $(tail -n 3 "$SIM_TMP/fds.err")"
grep -q 'the descriptor limit is 40, below' "$SIM_TMP/fds.err" ||
	fail "no warning about the descriptor limit: $(grep -i descriptor "$SIM_TMP/fds.err")"
python3 -c '
import socket, sys, time
held = []
for i in range(60):		# more than 40; the control socket holds 128
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(8)			# under the control socket idle timeout (10 s)
' "$SIM_TMP/fds.sock" &
holder=$!
bg_register "$holder"
full() { [ "$(ls "/proc/$pid/fd" | wc -l)" -ge 40 ]; }
wait_until 5 full || fail "the control clients did not take the descriptors: $(ls "/proc/$pid/fd" | wc -l)"
kill -HUP "$pid"
ended "$pid" fds
rc=$?
grep -q 'cannot start the routing: Too many open files' "$SIM_TMP/fds.err" ||
	fail "no reason logged for the stop: $(tail -n 3 "$SIM_TMP/fds.err")"
[ "$rc" -eq 71 ] || fail "a daemon out of descriptors exited $rc, not 71"
kill "$holder"
pass "out of descriptors: 'cannot start the routing: Too many open files', exit 71"

for sig in TERM INT; do
	start "$sig" 'sweep:' '  interval_s: 1'
	up() { grep -qs '^subnet up:' "$SIM_TMP/$sig.out"; }
	wait_until 20 up || fail "the emulated daemon did not come up: $(tail -n 3 "$SIM_TMP/$sig.err")"
	kill -"$sig" "$pid"
	ended "$pid" "$sig"
	rc=$?
	[ "$rc" -eq 0 ] || fail "SIG$sig: exit status $rc"
done
pass "SIGTERM and SIGINT: exit status 0"
