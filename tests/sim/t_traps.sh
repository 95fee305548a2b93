#!/bin/bash
# Traps in (ibsmd(8) Traps), against ibsmd built with ASan (build/ibsmd-asan):
# (a) an IsSM port that never answers SMInfo (`madsend silent`, which
#     claims IsSM after its agents) is probed by one heavy sweep and never again: the
#     heavy sweeps after it take as long as those before it came;
# (b) 20,000 traps from one host (spoofed 128s naming a switch, 128 from a
#     CA, 129-131, 256-259, 144 with no change): no deadlock of ibsmd,
#     umad2sim and ibsim, `ibsmctl status` answers during and after, every
#     trap counted and answered with a TrapRepress, the log rate-limited,
#     and no heavy sweep -- the bound is 0: a spoofed trap names a port
#     that is not its source, a 128 from a CA names no switch, a 144 is
#     checked against the port's PortInfo and finds it unchanged, and the
#     rest is only counted;
# (c) Unlink of a leaf-spine link: both switches' trap 128s arrive, one
#     heavy sweep follows.
. "$(dirname "$0")/common.sh"
ASAN_IBSMD="$SIM_ROOT/build/ibsmd-asan"
MADSEND="$SIM_ROOT/build/madsend"
[ -x "$ASAN_IBSMD" ] || fail "build/ibsmd-asan is missing: make build/ibsmd-asan"
[ -x "$MADSEND" ] || fail "build/madsend is missing: run make"
STORM=${TRAPS_STORM:-20000}

# the umad backend lives to the end of the process on purpose: its watcher
# thread stays blocked in umad_poll (mad/umad.c, umad_transport_open)
printf 'leak:umad_transport_open\n' >>"$SIM_TMP/lsan.supp"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
field() {	# KEY[.KEY...] of ibsmctl --json status
	ctl --json status | python3 -c '
import functools, json, sys
print(functools.reduce(lambda o, k: o[k], sys.argv[1].split("."), json.load(sys.stdin)))' "$1"
}
alive() { kill -0 "$daemon" 2>/dev/null || fail "ibsmd died: $(tail -n 5 "$log")"; }
heavy() { field heavy_sweeps; }
more_heavy_than() { [ "$(heavy)" -gt "$1" ] && [ "$(field sweeping)" = no ]; }
# sweep: one heavy sweep by hand; prints its sweep_ms
sweep() {
	local n
	n=$(heavy)
	ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
	wait_until 30 more_heavy_than "$n" || fail "no heavy sweep after ibsmctl sweep --heavy"
	field last_heavy_sweep.sweep_ms
}

sim_start "$net"
on_host_bg H-0 "$ASAN_IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 60 "$log"
smlid=$(field sm_lid)

# (a) sweep times without, then with, a silent IsSM port
before=""
for _ in 1 2 3; do before="$before $(sweep)"; done
on_host_bg H-5 "$MADSEND" silent 3600 >"$SIM_TMP/silent.out" 2>&1
silent_one() { [ "$(field silent_sm_ports)" = 1 ] && [ "$(field sweeping)" = no ]; }
wait_until 30 silent_one || fail "the silent IsSM port was not found silent: $(grep -i 'issm\|trap 144' "$log" | tail -n 3)"
probe=$(field last_heavy_sweep.sweep_ms)
after=""
for _ in 1 2 3; do after="$after $(sweep)"; done
worst() { tr ' ' '\n' | sort -n | tail -n 1; }
wb=$(worst <<<"$before")
wa=$(worst <<<"$after")
note "heavy sweep ms without the silent port:$before; the probing sweep: $probe; after:$after"
[ "$probe" -ge 800 ] || fail "the probing sweep took $probe ms: did it wait for the SMInfo timeouts (4 x 200 ms)?"
[ "$wa" -le $((wb + 150)) ] || fail "heavy sweeps slowed by the silent port: worst $wa ms, $wb ms before it"
pass "a silent IsSM port is probed once ($probe ms); heavy sweeps after it:$after ms (before:$before)"

# (b) the storm
h0=$(heavy)
rep0=$(field traps.represses)
ts0=$(field traps.heavy_sweeps)
sw_lid=$(on_host H-3 smpquery -D portinfo 0,1 0 | sed -n "s/^Lid:\.*//p")
[ -n "$sw_lid" ] || fail "no LID for H-3's leaf"
probes=0 unanswered=0
: >"$SIM_TMP/status.during"
t0=$(date +%s%N)
lines0=$(grep -cE 'trap [0-9]+ from LID' "$log")
# plain `ibsmctl status` as often as it goes, until every trap is in
(while [ ! -e "$SIM_TMP/stop" ]; do
	if timeout 5 "$IBSMCTL" -s "$sock" status >/dev/null 2>&1; then echo ok; else echo no; fi
done) >"$SIM_TMP/probes" &
prober=$!
bg_register "$prober"
on_host_bg H-3 "$MADSEND" traps "$STORM" "$smlid" "128:$sw_lid" 128:self 129:self \
	130:self 131:self 256:self 257:self 258:self 259:self 144:self >"$SIM_TMP/storm.out" 2>&1
storm=$SIM_LAST_PID
r0=$(field traps.received)
received() { echo $(( $(field traps.received) - r0 )); }
# status answers during the storm, until every trap is in
while :; do
	probes=$((probes + 1))
	r=$(received 2>/dev/null) || { unanswered=$((unanswered + 1)); r=""; }
	echo "$(( ($(date +%s%N) - t0) / 1000000 )) ${r:-none}" >>"$SIM_TMP/status.during"
	[ -n "$r" ] && [ "$r" -ge "$STORM" ] && break
	[ $(( ($(date +%s%N) - t0) / 1000000000 )) -ge 120 ] &&
		fail "only ${r:-?} of $STORM traps in after 120 s: $(tail -n 3 "$SIM_TMP/status.during")"
	alive
	sleep 0.1
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
touch "$SIM_TMP/stop"
wait "$prober" 2>/dev/null
fast=$(grep -c '^ok' "$SIM_TMP/probes")
slow=$(grep -c '^no' "$SIM_TMP/probes")
[ "$slow" -eq 0 ] || fail "plain ibsmctl status failed $slow times during the storm"
[ "$fast" -ge 3 ] || fail "only $fast status answers during the storm"
wait_pid "$storm" 10 || fail "madsend traps did not end"
grep -q "^traps=$STORM " "$SIM_TMP/storm.out" || fail "madsend: $(cat "$SIM_TMP/storm.out")"
[ "$unanswered" -eq 0 ] || fail "ibsmctl status unanswered $unanswered times of $probes during the storm"
sleep 1
alive
rounds=$((STORM / 10))
for k in spoofed unknown_issuer by_number.129 by_number.259; do
	v=$(field "traps.$k")
	[ "$v" -eq "$rounds" ] || fail "traps.$k is $v, not $rounds"
done
[ "$(field traps.by_number.128)" -eq $((2 * rounds)) ] || fail "trap 128 count: $(field traps.by_number.128)"
[ $(( $(field traps.represses) - rep0 )) -eq "$STORM" ] || fail "TrapRepresses: $(( $(field traps.represses) - rep0 )) of $STORM"
[ "$(heavy)" -eq "$h0" ] || fail "the storm caused $(( $(heavy) - h0 )) heavy sweeps"
[ "$(field traps.heavy_sweeps)" -eq "$ts0" ] || fail "traps asked for heavy sweeps: $(field traps)"
lines=$(( $(grep -cE 'trap [0-9]+ from LID' "$log") - lines0 ))
limit=$(( (ms / 1000 + 2) * 20 ))
[ "$lines" -le "$limit" ] || fail "$lines log lines about $STORM traps in $ms ms (limit $limit)"
[ "$(field traps.log_suppressed)" -gt 0 ] || fail "nothing suppressed in the log"
pass "$STORM traps from H-3 in $ms ms: no deadlock, status answered $fast + $probes times during it, every trap counted and repressed, 0 heavy sweeps, $lines log lines"

# (c) one failed leaf-spine link, two traps, one heavy sweep: the leaf
# L0-S2's uplink that its route to the SM does not take (so both traps arrive)
lids_tables "$SIM_TMP/pre"
up=$(awk -v l="$smlid" '$1 == "0x0002c90100000002" && $2 == l { print $3 }' "$SIM_TMP/pre.lft")
[ "$up" = 4 ] || [ "$up" = 5 ] || fail "L0-S2 routes the SM's LID $smlid to port '$up'"
cut=$((9 - up))
h0=$(heavy)
t128=$(field traps.by_number.128)
c0=$(field traps.coalesced) u0=$(field traps.unchanged) k0=$(field traps.checks)
t0=$(date +%s%N)
sim_cmd "Unlink \"L0-S2\"[$cut]" >/dev/null
wait_until 10 more_heavy_than "$h0" || fail "no heavy sweep after Unlink"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
sleep 2
[ "$(field traps.by_number.128)" -eq $((t128 + 2)) ] || fail "trap 128s after Unlink: $(( $(field traps.by_number.128) - t128 )), not 2"
[ "$(heavy)" -eq $((h0 + 1)) ] || fail "$(( $(heavy) - h0 )) heavy sweeps after Unlink, not 1"
check_up "$SIM_TMP/unlinked"
pass "Unlink \"L0-S2\"[$cut]: two trap 128s, one heavy sweep (done within $ms ms); checks $(( $(field traps.checks) - k0 )), coalesced $(( $(field traps.coalesced) - c0 )), unchanged $(( $(field traps.unchanged) - u0 )); fabric checked"

kill -TERM "$daemon"
wait_pid "$daemon" 10 || fail "ibsmd did not stop on SIGTERM"
grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error' "$log" && fail "ASan/UBSan: $(grep -m1 -A3 'ERROR\|runtime error' "$log")"
pass "ASan ibsmd stopped cleanly"
