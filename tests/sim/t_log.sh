#!/bin/bash
# Logs that name what happened (ibsmd(8) Log):
# (a) without JOURNAL_STREAM every line starts with an ISO 8601 date and
#     time (milliseconds, zone offset);
# (b) Unlink of a leaf-spine link logs exactly one notice line naming both
#     ends by the node_name_map's names and their ports; ReLink one line
#     saying it returned; a host unlinked, a leaf switch unlinked (one
#     line counting its three hosts) and back;
# (c) 1,000 traps in a burst (madsend traps, the trap injector) log at most
#     TRAPIN_LOG_BURST lines and one "N similar messages suppressed" line
#     (6 lines; it waits for the Unlinks' traps' window to close first),
#     and over the whole run the shown and suppressed trap lines add up to
#     the traps the daemon counted;
# (d) JOURNAL_STREAM naming stderr: every line starts with a syslog
#     priority "<N>"; naming another file: dates again;
# (e) the node_name_map names nodes in --dump-topology and in ibsmctl
#     (routes by a mapped name, lids, topology); a broken map is
#     refused with file:line and exit 78 (-n).
. "$(dirname "$0")/common.sh"
MADSEND="$SIM_ROOT/build/madsend"
[ -x "$MADSEND" ] || fail "build/madsend is missing: run make"
TRAPS=${LOG_TRAPS:-1000}
BURST=$(sed -n 's/^#define TRAPIN_LOG_BURST[[:space:]]*\([0-9]*\).*/\1/p' "$SIM_ROOT/traps/trapin.h")
WINDOW_MS=$(sed -n 's/^#define TRAPIN_LOG_WINDOW_MS[[:space:]]*\([0-9]*\).*/\1/p' "$SIM_ROOT/traps/trapin.h")
[ -n "$BURST" ] && [ -n "$WINDOW_MS" ] || fail "no TRAPIN_LOG_BURST/WINDOW_MS in traps/trapin.h"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
map="$SIM_TMP/node-name-map"
cat >"$map" <<'MAP'
# infiniband-diags node_name_map
0x0002c90100000002 "leaf-rack3"   # L0-S2
0x0002c90100000005 "spine-b"
0x0002c9020000001c "compute-07"
MAP
policy="$SIM_TMP/ibsmd.yaml"
printf 'node_name_map: %s\nsweep:\n  interval_s: 2\n' "$map" >"$policy"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
field() {	# KEY[.KEY...] of ibsmctl --json status
	ctl --json status | python3 -c '
import functools, json, sys
print(functools.reduce(lambda o, k: o[k], sys.argv[1].split("."), json.load(sys.stdin)))' "$1"
}
heavy() { field heavy_sweeps; }

# (e) a broken map: file:line, 78, before anything else
bad="$SIM_TMP/bad-map"
printf '# ok\n0x0002c90100000002 "leaf"\n0x0002c90100000003 "no end\n' >"$bad"
printf 'node_name_map: %s\n' "$bad" >"$SIM_TMP/bad.yaml"
out=$("$IBSMD" -n -c "$SIM_TMP/bad.yaml" 2>&1); rc=$?
[ "$rc" -eq 78 ] && grep -q "$bad:3: " <<<"$out" || fail "a broken node_name_map: exit $rc, '$out'"
pass "a broken node_name_map is refused: exit 78, '$out'"

sim_start "$net"
unset JOURNAL_STREAM
on_host_bg H-0 "$IBSMD" -c "$policy" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 30 "$log"

# (a) dates
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} ibsmd\[(error|warn|notice|info|debug)\]: '
n=$(grep -v '^subnet up:' "$log" | grep -cvE "$iso")
[ "$n" -eq 0 ] || fail "$n log lines without an ISO 8601 date: $(grep -v '^subnet up:' "$log" | grep -vE "$iso" | head -n 2)"
pass "without JOURNAL_STREAM: $(grep -cE "$iso" "$log") lines, each dated: $(grep -m1 -E "$iso" "$log" | cut -c1-60)"

# the map names nodes in ibsmctl too: routes takes a mapped name, lids
# and topology print it
ctl routes leaf-rack3 >"$SIM_TMP/routes.txt" && grep -q '^0x' "$SIM_TMP/routes.txt" ||
	fail "ibsmctl routes leaf-rack3: $(head -n 3 "$SIM_TMP/routes.txt")"
ctl --json lids | grep -q '"description": *"compute-07"' ||
	fail "ibsmctl --json lids does not name H-7 compute-07"
ctl --json topology | grep -q '"spine-b"' || fail "ibsmctl --json topology does not name spine-b"
pass "ibsmctl: routes leaf-rack3 answers ($(grep -c '^0x' "$SIM_TMP/routes.txt") LIDs), lids and topology use the map's names"

# (b) a leaf-spine link: lost, returned
h0=$(heavy)
sim_cmd 'Unlink "L0-S2"[5]' >/dev/null
wait_until 20 grep -q 'link lost:' "$log" || fail "no 'link lost' line after Unlink: $(tail -n 5 "$log")"
sleep 1
lost=$(grep 'link lost:' "$log")
[ "$(wc -l <<<"$lost")" -eq 1 ] || fail "$(wc -l <<<"$lost") 'link lost' lines for one link: $lost"
grep -qE '\[notice\]: link lost: ("leaf-rack3" port 5 - "spine-b" port 3|"spine-b" port 3 - "leaf-rack3" port 5)$' <<<"$lost" ||
	fail "the line does not name both ends: $lost"
other=$(grep -cE '(link|switch|host) (lost|found|returned):' "$log")
[ "$other" -eq 1 ] || fail "$other event lines for one lost link: $(grep -E '(link|switch|host) (lost|found|returned):' "$log")"
pass "Unlink \"L0-S2\"[5]: one notice: ${lost#* ibsmd}"
sim_cmd 'ReLink "L0-S2"[5]' >/dev/null
wait_until 20 grep -q 'link returned:' "$log" || fail "no 'link returned' after ReLink: $(tail -n 5 "$log")"
sleep 1
back=$(grep 'link returned:' "$log")
[ "$(wc -l <<<"$back")" -eq 1 ] && grep -q '"leaf-rack3" port 5\|"spine-b" port 3' <<<"$back" ||
	fail "after ReLink: $back"
pass "ReLink: one notice: ${back#* ibsmd}"

# a host leaves: named by the map, with the switch port it was on
sim_cmd 'Unlink "H-7"[1]' >/dev/null
wait_until 20 grep -q 'host lost:' "$log" || fail "no 'host lost' after Unlink \"H-7\"[1]: $(tail -n 5 "$log")"
grep -q 'host lost: "compute-07" (GUID 0x0002c9020000001c' "$log" || fail "host lost: $(grep 'host lost' "$log")"
pass "Unlink \"H-7\"[1]: $(grep -o 'host lost:.*' "$log")"
sim_cmd 'ReLink "H-7"[1]' >/dev/null
wait_until 20 grep -q 'host found: "compute-07"' "$log" || fail "no 'host found' after ReLink: $(tail -n 5 "$log")"

# a leaf switch leaves with its three hosts: one line
ev='(link|switch|host) (lost|found|returned):'
e0=$(grep -cE "$ev" "$log")
sim_cmd 'Unlink "L0-S3"' >/dev/null
wait_until 20 grep -q 'switch lost: "L0-S3"' "$log" || fail "no 'switch lost' after Unlink \"L0-S3\": $(tail -n 5 "$log")"
sleep 1
new=$(grep -E "$ev" "$log" | tail -n +$((e0 + 1)))
[ "$(wc -l <<<"$new")" -eq 1 ] && grep -q '(GUID 0x0002c90100000003, 5 links, 3 hosts lost with it)$' <<<"$new" ||
	fail "Unlink \"L0-S3\": $new"
pass "Unlink \"L0-S3\": one notice: ${new#* ibsmd}"
sim_cmd 'ReLink "L0-S3"' >/dev/null
wait_until 20 grep -q 'switch found: "L0-S3".* 3 hosts found with it' "$log" ||
	fail "no 'switch found' after ReLink \"L0-S3\": $(grep -E "$ev" "$log" | tail -n 3)"

# (c) a trap storm; the Unlinks' traps before it share the limiter, so
# the sums are over the whole log and every trap the daemon received
smlid=$(field sm_lid)
wait_until 10 [ "$(field sweeping)" = no ] || fail "a sweep never ends"
sleep $((WINDOW_MS / 1000 + 1))	# the Unlinks' traps' window is over: the storm opens one
before=$(wc -l <"$log")
on_host H-3 "$MADSEND" traps "$TRAPS" "$smlid" 128:self 129:self 130:self \
	>"$SIM_TMP/storm.out" 2>&1 || fail "madsend traps: $(cat "$SIM_TMP/storm.out")"
grep -q "^traps=$TRAPS " "$SIM_TMP/storm.out" || fail "madsend: $(cat "$SIM_TMP/storm.out")"
storm_counted() { tail -n +"$((before + 1))" "$log" | grep -q 'similar messages suppressed ("trap'; }
wait_until 15 storm_counted ||
	fail "no 'similar messages suppressed' line after $TRAPS traps: $(tail -n 3 "$log")"
sleep 1
tail -n +"$((before + 1))" "$log" >"$SIM_TMP/storm.log"
received=$(field traps.received)
[ "$received" -ge "$TRAPS" ] || fail "the daemon received $received traps of $TRAPS"
all_shown=$(grep -cE 'trap [0-9]+ from LID [0-9]+( \(("[^"]*"|0x[0-9a-f]+) port [0-9]+\))? \(source LID' "$log")
# held FILE: the sum of the trap lines' "N similar messages suppressed"
held() { sed -n 's/.*: \([0-9]*\) similar messages suppressed ("trap.*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'; }
all_held=$(held "$log")
[ $((all_shown + all_held)) -eq "$received" ] ||
	fail "$all_shown trap lines + $all_held suppressed is not the $received traps received"
shown=$(grep -cE 'trap [0-9]+ from LID [0-9]+( \(("[^"]*"|0x[0-9a-f]+) port [0-9]+\))? \(source LID' "$SIM_TMP/storm.log")
held=$(held "$SIM_TMP/storm.log")
lines=$(wc -l <"$SIM_TMP/storm.log")
[ "$shown" -ge 1 ] && [ "$shown" -le $((2 * BURST)) ] || fail "$shown lines about $TRAPS traps (burst $BURST)"
[ "$lines" -le $((2 * BURST + 4)) ] || fail "$lines log lines during the storm: $(head -n 20 "$SIM_TMP/storm.log")"
grep -qE 'trap 1(29|30) from LID [0-9]+ \("H-3" port [0-9]+\)' "$SIM_TMP/storm.log" ||
	fail "no port-error trap line names H-3 and its port: $(grep -m 2 'trap 1[23]' "$SIM_TMP/storm.log")"
pass "$TRAPS traps: $lines log lines ($shown about traps, $held suppressed); all $received traps: $all_shown lines + $all_held suppressed: $(grep -o '[0-9]* similar.*' "$SIM_TMP/storm.log" | head -n 1)"

kill -TERM "$daemon"
wait_pid "$daemon" 10 || fail "ibsmd did not stop on SIGTERM"

# (d) JOURNAL_STREAM: priorities when it names stderr, dates when not
: >"$SIM_TMP/once.err"
js=$(stat -c '%d:%i' "$SIM_TMP/once.err")
JOURNAL_STREAM=$js ibsmd_once H-0 "$SIM_TMP/state" -c "$policy" \
	--dump-topology "$SIM_TMP/dump.topo" || fail "--once: $(tail -n 3 "$SIM_TMP/once.err")"
[ "$(stat -c '%d:%i' "$SIM_TMP/once.err")" = "$js" ] || fail "once.err is a new file"
n=$(wc -l <"$SIM_TMP/once.err")
bad=$(grep -cvE '^<[3-7]>ibsmd\[(error|warn|notice|info|debug)\]: ' "$SIM_TMP/once.err")
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ] || fail "JOURNAL_STREAM set: $bad of $n lines without <N>: $(head -n 2 "$SIM_TMP/once.err")"
grep -q '^<5>ibsmd\[notice\]: ' "$SIM_TMP/once.err" || fail "no <5> notice line: $(head -n 2 "$SIM_TMP/once.err")"
pass "JOURNAL_STREAM=$js (stderr): $n lines with <N> priorities: $(head -n 1 "$SIM_TMP/once.err" | cut -c1-60)"
JOURNAL_STREAM=$(stat -c '%d:%i' "$map") ibsmd_once H-0 "$SIM_TMP/state" -c "$policy" ||
	fail "--once: $(tail -n 3 "$SIM_TMP/once.err")"
n=$(grep -cvE "$iso" "$SIM_TMP/once.err")
[ "$n" -eq 0 ] || fail "JOURNAL_STREAM naming another file: $n lines undated: $(head -n 2 "$SIM_TMP/once.err")"
pass "JOURNAL_STREAM naming another file: dates"

# (e) the dump names nodes as ibnetdiscover --node-name-map does
grep -q '^Switch.*# "leaf-rack3"' "$SIM_TMP/dump.topo" && grep -q '"compute-07"' "$SIM_TMP/dump.topo" ||
	fail "--dump-topology without the map's names: $(grep -m2 '^Switch' "$SIM_TMP/dump.topo")"
pass "--dump-topology names nodes by the map: $(grep -m1 'leaf-rack3' "$SIM_TMP/dump.topo" | tr -s '\t' ' ')"
