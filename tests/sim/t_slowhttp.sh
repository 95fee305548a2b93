#!/bin/bash
# The metrics' HTTP server against a slowloris (tests/sim/slowhttp.py):
# 1,100 connections, each sending one header line every 4 s and never
# finishing its request (a closed one is opened again at its next
# line), against an --emulate daemon held to 1,024 descriptors
# (`ulimit -n 1024`: a unit without LimitNOFILE).  Throughout the flood
# `ibsmctl status` answers within 1 s, the daemon holds at most
# metrics.max_connections (64 by default) of the connections and its
# descriptors stay far below the limit, the light sweeps go on, a heavy
# sweep asked for in the middle is done, and a scrape is answered; the
# log stays under 1 MB; the closures are counted in /metrics; SIGTERM
# then ends the daemon with status 0.  Emulated: no ibsim, about 30 s.
. "$(dirname "$0")/common.sh"

CONNS=1100
FLOOD_S=22
LOG_MAX=$((1024 * 1024))
port=$(free_port)
sock="$SIM_TMP/ctl.sock"
out="$SIM_TMP/daemon.out"
err="$SIM_TMP/daemon.err"
policy="$SIM_TMP/policy.yaml"
printf 'metrics:\n  listen: "127.0.0.1:%s"\nsweep:\n  interval_s: 1\n' "$port" >"$policy"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }

(ulimit -n 1024 && exec "$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -c "$policy" -s "$sock" \
	-S "$SIM_TMP/state" >"$out" 2>"$err") &
daemon=$!
bg_register "$daemon"
up() { grep -q '^subnet up:' "$out"; }
wait_until 20 up || fail "the emulated daemon did not come up: $(tail -n 3 "$err")"
limit=$(awk '/^Max open files/ { print $4 }' "/proc/$daemon/limits")
[ "$limit" = 1024 ] || fail "the daemon's descriptor limit is $limit, not 1024"
fds0=$(ls "/proc/$daemon/fd" | wc -l)

# A failure during the flood: the daemon goes first, so that a log
# growing by megabytes a second is cut to its first megabyte.
flood_fail() {
	kill -KILL "$daemon" 2>/dev/null
	wait_pid "$daemon" 5
	truncate -s "<$LOG_MAX" "$err" "$out"
	fail "$@"
}
logsize() { echo $(($(stat -c %s "$err") + $(stat -c %s "$out"))); }
json() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
heavy_done() { [ "$(grep -c '^subnet up:' "$out")" -gt "$heavy0" ]; }

python3 "$SIM_ROOT/tests/sim/slowhttp.py" 127.0.0.1 "$port" --conns "$CONNS" \
	--interval 4 --duration "$FLOOD_S" >"$SIM_TMP/slow.out" 2>&1 &
slow=$!
bg_register "$slow"
light0=$(ctl --json status | json light_sweeps)
heavy0=$(grep -c '^subnet up:' "$out")
start=$SECONDS
max_ms=0 max_fds=0 probes=0 scraped=no asked=no
while kill -0 "$slow" 2>/dev/null; do
	sleep 0.5
	kill -0 "$daemon" 2>/dev/null || flood_fail "ibsmd died during the flood: $(tail -n 3 "$err")"
	t0=$(date +%s%N)
	timeout 1 "$IBSMCTL" -s "$sock" status >/dev/null 2>&1 ||
		flood_fail "ibsmctl status did not answer within 1 s, $((SECONDS - start)) s into the flood"
	ms=$((($(date +%s%N) - t0) / 1000000))
	probes=$((probes + 1))
	[ "$ms" -gt "$max_ms" ] && max_ms=$ms
	n=$(ls "/proc/$daemon/fd" 2>/dev/null | wc -l)
	[ "$n" -gt "$max_fds" ] && max_fds=$n
	[ "$(logsize)" -lt "$LOG_MAX" ] ||
		flood_fail "the log reached $(logsize) bytes $((SECONDS - start)) s into the flood: $(tail -c 300 "$err")"
	if [ $((SECONDS - start)) -ge 8 ] && [ "$asked" = no ]; then
		ctl sweep --heavy >/dev/null || flood_fail "ibsmctl sweep --heavy during the flood"
		asked=yes
	fi
	if [ $((SECONDS - start)) -ge 12 ] && [ "$scraped" = no ]; then
		curl -sS -m 2 -o "$SIM_TMP/scrape.prom" "http://127.0.0.1:$port/metrics" &&
			grep -q '^ibsmd_up 1' "$SIM_TMP/scrape.prom" ||
			flood_fail "a scrape during the flood was not answered"
		scraped=yes
	fi
done
wait "$slow" || fail "slowhttp.py: $(tail -n 3 "$SIM_TMP/slow.out")"
totals=$(tail -n 1 "$SIM_TMP/slow.out")
note "client: $totals"
[ "$scraped" = yes ] && [ "$asked" = yes ] || fail "the flood ended before the checks in its middle"
kill -0 "$daemon" 2>/dev/null || fail "ibsmd died: $(tail -n 3 "$err")"
wait_until 10 heavy_done || fail "the heavy sweep asked for during the flood was not done: $(tail -n 3 "$err")"
light1=$(ctl --json status | json light_sweeps)
[ "$light1" -ge $((light0 + FLOOD_S / 2)) ] ||
	fail "light sweeps went from $light0 to $light1 in a ${FLOOD_S} s flood (interval 1 s)"
[ "$max_fds" -le $((fds0 + 64 + 8)) ] ||
	fail "the daemon held $max_fds descriptors (before the flood: $fds0; metrics.max_connections 64)"
bytes=$(logsize)
[ "$bytes" -lt "$LOG_MAX" ] || fail "the log reached $bytes bytes"
pass "$CONNS slow HTTP connections for ${FLOOD_S} s at 1,024 descriptors: status answered $probes times within $max_ms ms, at most $max_fds descriptors ($fds0 before), log $bytes bytes, light sweeps $light0 -> $light1, the heavy sweep asked for done, a scrape answered"

ctl metrics >"$SIM_TMP/after.prom" || fail "ibsmctl metrics"
closed=$(awk '$1 == "ibsmd_http_connections_closed_total{reason=\"max_connections\"}" { print $2 }' "$SIM_TMP/after.prom")
[ -n "$closed" ] && [ "$closed" -ge $((CONNS - 64)) ] ||
	fail "closures for the cap counted: '$closed' (the client opened $CONNS)"
grep -q 'metrics.max_connections' "$err" || fail "no log line for the cap"
pass "/metrics: $closed connections closed for newcomers past metrics.max_connections; logged rate-limited ($(grep -c 'similar messages suppressed' "$err") count lines)"

kill -TERM "$daemon"
wait "$daemon"
rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM after the flood: exit status $rc"
pass "SIGTERM: exit status 0"
