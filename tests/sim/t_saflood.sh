#!/bin/bash
# t_saflood.sh: one host floods the SA with GetTables of every PathRecord
# (144 hosts, 168 end ports: 28,224 records, 1.8 MB an answer) and never
# ACKs an answer (`madsend satable`), 200 a second for 5 s.  ibsmd under
# umad2sim, its own process:
#   - its RSS grows by less than 2 x sa.max_answer_bytes_per_requester
#     (64 MiB by default: the answers held, and one being built) plus
#     RSS_SLACK_MB;
#   - the flooder's answers are resent on schedule (the first resend
#     within 200 ms + RESEND_SLACK_MS) and the rest refused Busy;
#   - another host's PathRecord Gets (saperf) are all answered, and so are
#     a third host's NodeRecord GetTables (saperf -N: RMPP answers);
#   - a leaf-spine cable pulled during the flood: the trap 128's heavy
#     sweep starts within TRAP_BOUND_MS (the receive pump is bounded by
#     time: 256 MADs of 10 ms each held the traps for seconds).
# Prints ibsmd's RSS and the well-behaved host's answer rate.
. "$(dirname "$0")/common.sh"
MADSEND="$SIM_ROOT/build/madsend"
SAPERF="$SIM_ROOT/build/saperf"
[ -x "$MADSEND" ] && [ -x "$SAPERF" ] || fail "build/madsend or build/saperf is missing: run make"
FLOOD_S=5
RATE=200
RSS_SLACK_MB=32
RESEND_SLACK_MS=200
TRAP_BOUND_MS=1000

net="$SIM_TMP/ft.net"
gen ftree2 --radix 24 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
field() { status_field "$sock" "$1"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$daemon/status"; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 60 "$log"
smlid=$(field sm_lid)
# the SA answers (saquery takes the first MAD of a table: ibsim has no RMPP)
wait_until 20 on_host H-7 saquery -N >/dev/null 2>&1 || fail "the SA does not answer"
rss0=$(rss_kb)

on_host_bg H-3 "$MADSEND" satable "$FLOOD_S" "$smlid" "$RATE" >"$SIM_TMP/flood.out" 2>&1
flooder=$SIM_LAST_PID
# RSS every 100 ms while the flood lasts
(
	end=$(( $(date +%s) + FLOOD_S + 3 ))
	while [ "$(date +%s)" -lt "$end" ] && kill -0 "$daemon" 2>/dev/null; do
		awk '/^VmRSS:/ { print $2 }' "/proc/$daemon/status"
		sleep 0.1
	done
) >"$SIM_TMP/rss" &
sampler=$!
bg_register "$sampler"
sleep 1
# the well-behaved hosts meanwhile
on_host_bg H-9 "$SAPERF" -k 4 -t 2 -T 1000 -r 3 >"$SIM_TMP/saperf.out" 2>"$SIM_TMP/saperf.err"
perf=$SIM_LAST_PID
# every NodeRecord (168 of them, 18 KB: RMPP) a table at a time
on_host_bg H-12 "$SAPERF" -N 168 -k 1 -t 2 -T 1000 -r 3 >"$SIM_TMP/tables.out" 2>"$SIM_TMP/tables.err"
tabler=$SIM_LAST_PID
# a leaf-spine cable out: trap 128 from both switches, a heavy sweep
h0=$(field heavy_sweeps)
n0=$(grep -c 'heavy sweep: ' "$log")
t0=$(date +%s%3N)
sim_cmd "Unlink \"L0-S3\"[15]" >/dev/null
more_heavy_than() { [ "$(field heavy_sweeps)" -gt "$1" ]; }
wait_until 20 more_heavy_than "$h0" || fail "no heavy sweep after Unlink during the flood"
# the first heavy sweep after it: its start and why
line=$(grep 'heavy sweep: ' "$log" | sed -n "$((n0 + 1))p")
trap_ms=$(( $(date -d "$(cut -d' ' -f1 <<<"$line")" +%s%3N) - t0 ))
why=$(sed 's/.*heavy sweep: //' <<<"$line")
wait_pid "$perf" 30 || fail "saperf did not end"
wait_pid "$tabler" 30 || fail "saperf -N did not end"
wait_pid "$flooder" 30 || fail "madsend satable did not end"
wait "$sampler" 2>/dev/null
kill -0 "$daemon" 2>/dev/null || fail "ibsmd died: $(tail -n 5 "$log")"

perf_out=$(cat "$SIM_TMP/saperf.out")
tables_out=$(cat "$SIM_TMP/tables.out")
flood=$(cat "$SIM_TMP/flood.out")
rss_max=$(sort -n "$SIM_TMP/rss" | tail -n 1)
grow_mb=$(( (rss_max - rss0) / 1024 ))
num() { sed -n "s/\(^\|.*[ {\"]\)$1\"\{0,1\}[=:]\([0-9.]*\).*/\2/p" <<<"$2"; }
note "flood: $flood"
note "ibsmd RSS: ${rss0} KB before, ${rss_max} KB at most during the flood (+${grow_mb} MB)"
note "H-9's PathRecord Gets during the flood: $perf_out"
note "H-12's NodeRecord GetTables during the flood: $tables_out"
note "the first heavy sweep began ${trap_ms} ms after Unlink: $why"
note "status: $(ctl --json status | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["sa"]))')"

bound=$(( 2 * 64 + RSS_SLACK_MB ))
[ "$grow_mb" -lt "$bound" ] || fail "ibsmd's RSS grew by $grow_mb MB during the flood (bound $bound MB)"
[ "$(num ok "$perf_out")" = "$(num queries "$perf_out")" ] && [ "$(num queries "$perf_out")" -gt 0 ] ||
	fail "H-9's PathRecord Gets were not all answered during the flood: $perf_out"
[ "$(num ok "$tables_out")" = "$(num queries "$tables_out")" ] && [ "$(num queries "$tables_out")" -gt 0 ] ||
	fail "H-12's NodeRecord GetTables were not all answered during the flood: $tables_out"
[ "$(num busy "$flood")" -gt 0 ] || fail "no GetTable of the flood was refused Busy: $flood"
[ "$(num resent "$flood")" -gt 0 ] || fail "no answer of the flood was resent: $flood"
[ "$(num first_resend_max_ms "$flood")" -lt $((200 + RESEND_SLACK_MS)) ] ||
	fail "an answer's first RMPP resend came $(num first_resend_max_ms "$flood") ms after it (timeout 200 ms)"
case $why in "trap 128 "*) ;; *) fail "the first heavy sweep after Unlink was not the trap's: $why" ;; esac
[ "$trap_ms" -lt "$TRAP_BOUND_MS" ] || fail "the trap's heavy sweep began $trap_ms ms after Unlink (bound $TRAP_BOUND_MS ms)"
pass "GetTable flood from H-3 ($(num sent "$flood") sent, $(num busy "$flood") Busy): ibsmd RSS +$grow_mb MB (< $bound), H-9 $(num qps "$perf_out") PathRecord Gets/s and H-12 $(num ok "$tables_out") NodeRecord tables all answered, resends within $(num first_resend_max_ms "$flood") ms, trap sweep after $trap_ms ms"

kill -TERM "$daemon"
wait_pid "$daemon" 10 || fail "ibsmd did not stop on SIGTERM"
