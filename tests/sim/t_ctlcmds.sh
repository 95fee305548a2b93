#!/bin/bash
# ibsmctl against a daemon under ibsim, judged with infiniband-diags:
# every implemented command answers in text and --json (each JSON document
# parses), errors too ({"error": ...} on stdout, exit 1); `lids` equals
# ibnetdiscover's LIDs; `routes SWITCH` (by LID, GUID and description)
# equals `ibroute` for every switch; `verify` reads the switches back and
# says OK, and FAILED (exit 1) after one LFT entry is corrupted by hand
# (lftset: an SMP Set from a host), naming the LID; a heavy sweep rewrites
# the entry; light sweeps read back what the SM wrote (sweep.scrub_blocks
# a sweep) and, within ceil(blocks / scrub_blocks) of them, repair an LFT
# entry and an MFT bit rewritten from a host, judged with ibroute and
# reported (log, status, metrics, last_error); a rejected reload exits 1,
# shows in `status` until a good reload clears it, and the old policy keeps
# running; a reload that empties the policy or drops the SM_Key or every
# partition is refused (ibsmctl and SIGHUP) unless forced.
. "$(dirname "$0")/common.sh"

LFTSET="$SIM_ROOT/build/lftset"
ASAN_IBSMD="$SIM_ROOT/build/ibsmd-asan"	# the deferred verify, under ASan
[ -x "$LFTSET" ] || fail "build/lftset is missing: run make"
[ -x "$ASAN_IBSMD" ] || fail "build/ibsmd-asan is missing: make build/ibsmd-asan"
# the umad backend lives to the end of the process on purpose (mad/umad.c), as in t_traps
printf 'leak:umad_transport_open\n' >>"$SIM_TMP/lsan.supp"
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
policy="$SIM_TMP/policy.yaml"
# light sweeps only when asked (ibsmctl sweep); each reads back 4 blocks
printf 'sm:\n  priority: 7\nsweep:\n  interval_s: 0\n  scrub_blocks: 4\n' >"$policy"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
# pyjson CODE: runs python3 CODE on the JSON document on stdin (as d)
pyjson() { python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }

sim_start "$net"
on_host_bg H-0 "$ASAN_IBSMD" -S "$SIM_TMP/state" -s "$sock" -c "$policy" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 60 "$log" "from the daemon"
lids_tables "$SIM_TMP/up"

# every command's --json parses; the text form is not JSON and not empty
for cmd in status lids "routes L0-S0" verify subscribers "vm list" "sweep" reroute reload; do
	# shellcheck disable=SC2086
	out=$(ctl --json $cmd) || fail "ibsmctl --json $cmd: exit $? ($out)"
	python3 -m json.tool <<<"$out" >/dev/null || fail "ibsmctl --json $cmd: not JSON: $out"
	[ "$cmd" = reroute ] || [ "$cmd" = sweep ] || [ "$cmd" = reload ] || {
		# shellcheck disable=SC2086
		txt=$(ctl $cmd) || fail "ibsmctl $cmd: exit $?"
		[ -n "$txt" ] && ! python3 -m json.tool <<<"$txt" >/dev/null 2>&1 ||
			fail "ibsmctl $cmd: text form '$txt'"
	}
	wait_until 10 ctl verify >/dev/null 2>&1 || true	# let a requested sweep end
done
pass "every command answers text and --json (status lids routes verify subscribers vm sweep reroute reload)"

# status: version, uptime, ISO 8601 dates, no error
ctl --json status | pyjson '
import re
iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
assert re.match(r"^\d+\.\d+", d["version"]), d["version"]
assert d["uptime_s"] >= 0 and iso.match(d["started"]), d["started"]
assert iso.match(d["last_heavy_sweep"]["time"]), d["last_heavy_sweep"]
assert d["last_error"] is None and d["errors"] == [], d["errors"]
assert d["priority"] == 7 and d["state"] == "MASTER"
assert d["mads"]["sent"] > 0' || fail "ibsmctl --json status: $(ctl --json status | head -c 600)"
ctl status | grep -Eq '^last heavy sweep: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z, ' &&
	ctl status --verbose | grep -Eq '^last_heavy_sweep:$' &&
	ctl status --verbose | grep -Eq '^  time: [0-9]{4}-[0-9]{2}-[0-9]{2}T' ||
	fail "ibsmctl status text: $(ctl status | head -n 8)"
pass "status: version, uptime, last heavy sweep dated (ISO 8601), MAD statistics, no error"

# lids: the same GUID -> LID as ibnetdiscover (lids_of.py)
ctl --json lids | pyjson '
for e in sorted(d["lids"], key=lambda e: int(e["port_guid"], 16)):
    print("0x%016x %d" % (int(e["port_guid"], 16), e["lid"]))' >"$SIM_TMP/ctl.lids"
diff "$SIM_TMP/up.lids" "$SIM_TMP/ctl.lids" >/dev/null ||
	fail "ibsmctl lids differs from ibnetdiscover: $(diff "$SIM_TMP/up.lids" "$SIM_TMP/ctl.lids" | head -n 5)"
[ "$(ctl lids | tail -n +2 | wc -l)" -eq "$(wc -l <"$SIM_TMP/up.lids")" ] || fail "ibsmctl lids text: $(ctl lids | head -n 3)"
pass "lids: $(wc -l <"$SIM_TMP/up.lids") ports, GUID -> LID as ibnetdiscover reads them"

# routes SWITCH = ibroute, for every switch; by LID, GUID and description
entries() { awk '/^0x[0-9a-f]+ [0-9]+ /{ print $1, $2 }'; }
n=0
while read -r desc lid guid; do
	on_host H-5 ibroute "$lid" 2>/dev/null | entries >"$SIM_TMP/ibroute.$lid"
	[ -s "$SIM_TMP/ibroute.$lid" ] || fail "ibroute $lid printed no entries"
	for name in "$lid" "$guid" "$desc"; do
		ctl routes "$name" | entries >"$SIM_TMP/ctl.routes" || fail "ibsmctl routes $name: exit $?"
		diff "$SIM_TMP/ibroute.$lid" "$SIM_TMP/ctl.routes" >/dev/null ||
			fail "ibsmctl routes $name differs from ibroute $lid: $(diff "$SIM_TMP/ibroute.$lid" "$SIM_TMP/ctl.routes" | head -n 4)"
	done
	ctl --json routes "$lid" | pyjson "
assert d['switch']['lid'] == $lid and d['valid'] == len(d['routes']) == $(wc -l <"$SIM_TMP/ibroute.$lid")" ||
		fail "ibsmctl --json routes $lid"
	n=$((n + 1))
done < <(ctl --json lids | pyjson '
for e in d["lids"]:
    if e["type"] == "Switch": print(e["description"], e["lid"], e["node_guid"])')
[ "$n" -eq 6 ] || fail "ibsmctl lids named $n switches, not 6"
pass "routes SWITCH equals ibroute on all $n switches (by LID, GUID and node description)"

# verify: OK on what the switches hold
out=$(ctl verify) || fail "ibsmctl verify: exit $? ($out)"
grep -q '^verify: OK' <<<"$out" || fail "ibsmctl verify: $out"
ctl --json verify | pyjson '
assert d["result"] == "OK" and d["switches"] == 6 and d["reads_failed"] == 0, d
assert d["pairs"] > 0 and d["unreachable"] == 0 and d["entries_differing_from_sm"] == 0, d' ||
	fail "ibsmctl --json verify: $(ctl --json verify | head -c 400)"
pass "verify: the LFTs read back from the switches pass the check"

# corrupt one entry: leaf L0-S0's route to a host on another leaf goes to port 0 (drop)
leaf=$(ctl --json routes L0-S0 | pyjson 'print(d["switch"]["lid"])')
victim=$(ctl --json lids | pyjson 'print([e["lid"] for e in d["lids"] if e["description"] == "H-11"][0])')
out=$(on_host H-5 "$LFTSET" "$leaf" "$victim" 0 2>&1) || fail "lftset $leaf $victim 0: $out"
out=$(ctl verify); rc=$?
[ "$rc" -eq 1 ] && grep -q '^verify: FAILED' <<<"$out" || fail "verify after the corruption: exit $rc ($out)"
ctl --json verify | pyjson "
assert d['result'] == 'FAILED' and d['errors'] > 0 and d['drops'] > 0, d
assert d['entries_differing_from_sm'] == 1, d['entries_differing_from_sm']
assert any(f['lid'] == $victim and f['failure'] == 'drop' for f in d['failures']), d['failures']" ||
	fail "ibsmctl --json verify after the corruption: $(ctl --json verify | head -c 600)"
n=$(sweeps)
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep"
wait_until 10 ctl verify >/dev/null 2>&1 || fail "verify after the heavy sweep: $(ctl verify 2>&1 | tail -n 3)"
pass "a corrupted LFT entry (L0-S0, LID $victim -> port 0): verify FAILED naming the LID, a heavy sweep repairs it"

# the scrub: light sweeps find and repair what a host rewrote, within
# N = ceil(blocks held / sweep.scrub_blocks) light sweeps
scrub() { ctl --json status | pyjson "print(d['scrub']['$1'])"; }
light_over() {	# light_over N: more than N light sweeps, and none running
	ctl --json status | pyjson "assert d['light_sweeps'] > $1 and d['sweeping'] == 'no'" 2>/dev/null
}
light_sweeps() {	# light_sweeps K: K light sweeps, one after the other
	local i l
	for i in $(seq 1 "$1"); do
		l=$(ctl --json status | pyjson 'print(d["light_sweeps"])')
		ctl sweep >/dev/null || fail "ibsmctl sweep"
		wait_until 10 light_over "$l" || fail "light sweep $i of $1 did not end"
	done
}
held=$(scrub blocks_held) && n=$(scrub light_sweeps_per_pass) || fail "status has no scrub figures: $(ctl --json status | head -c 400)"
[ "$(scrub blocks_per_light_sweep)" -eq 4 ] && [ "$held" -gt 4 ] && [ "$n" -eq $(((held + 3) / 4)) ] ||
	fail "scrub figures: $held blocks held, $n light sweeps a pass"
ctl --json status | pyjson 'assert d["scrub"]["tampered"] == 0 and d["last_error"] is None, d["scrub"]' ||
	fail "the scrub found tampering on an untouched fabric: $(ctl --json status | head -c 600)"
on_host H-5 ibroute "$leaf" 2>/dev/null | entries >"$SIM_TMP/scrub.before"
on_host H-5 ibroute -M "$leaf" 2>/dev/null >"$SIM_TMP/scrub.mft.before"
out=$(on_host H-5 "$LFTSET" "$leaf" "$victim" 0 2>&1) || fail "lftset $leaf $victim 0: $out"
out=$(on_host H-5 "$LFTSET" -M "$leaf" 0xc000 7 on 2>&1) || fail "lftset -M $leaf 0xc000 7 on: $out"
on_host H-5 ibroute "$leaf" 2>/dev/null | entries >"$SIM_TMP/scrub.tampered"
on_host H-5 ibroute -M "$leaf" 2>/dev/null >"$SIM_TMP/scrub.mft.tampered"
! diff -q "$SIM_TMP/scrub.before" "$SIM_TMP/scrub.tampered" >/dev/null &&
	! diff -q "$SIM_TMP/scrub.mft.before" "$SIM_TMP/scrub.mft.tampered" >/dev/null ||
	fail "lftset changed nothing ibroute sees"
light_sweeps "$n"
on_host H-5 ibroute "$leaf" 2>/dev/null | entries >"$SIM_TMP/scrub.after"
on_host H-5 ibroute -M "$leaf" 2>/dev/null >"$SIM_TMP/scrub.mft.after"
diff -q "$SIM_TMP/scrub.before" "$SIM_TMP/scrub.after" >/dev/null ||
	fail "LFT of $leaf not repaired after $n light sweeps: $(diff "$SIM_TMP/scrub.before" "$SIM_TMP/scrub.after")"
diff -q "$SIM_TMP/scrub.mft.before" "$SIM_TMP/scrub.mft.after" >/dev/null ||
	fail "MFT of $leaf not repaired after $n light sweeps: $(diff "$SIM_TMP/scrub.mft.before" "$SIM_TMP/scrub.mft.after")"
grep -q "tampering: switch 0x[0-9a-f]* \"L0-S0\" (LID $leaf) LFT block 0 (LIDs 0-63) differs from what the SM wrote: LID $victim: port 0 (written [1-9]" "$log" ||
	fail "no tampering line for the LFT entry: $(grep -m3 tampering "$log")"
grep -q "tampering: switch 0x[0-9a-f]* \"L0-S0\" (LID $leaf) MFT block 0 position 0 (MLIDs 0xc000-0xc01f) differs from what the SM wrote: MLID 0xc000: mask 0x" "$log" ||
	fail "no tampering line for the MFT bit: $(grep -m3 tampering "$log")"
ctl --json status | pyjson '
s = d["scrub"]
assert s["tampered"] == 2 and s["repaired"] == 2, s
e = d["last_error"]
assert e["kind"] == "tamper" and "differed from what the SM wrote" in e["message"], e' ||
	fail "status after the repair: $(ctl --json status | head -c 800)"
ctl metrics | grep -q '^ibsmd_scrub_tampered_blocks_total 2$' && ctl metrics | grep -q '^ibsmd_scrub_repaired_blocks_total 2$' ||
	fail "metrics: $(ctl metrics | grep scrub)"
light_sweeps $((2 * n))	# the pass of the finding ends, a whole pass finds nothing: cleared
ctl --json status | pyjson 'assert d["last_error"] is None and d["scrub"]["tampered"] == 2, d["errors"]' ||
	fail "the tamper condition stayed after a clean pass: $(ctl --json status | head -c 600)"
pass "scrub: an LFT entry and an MFT bit rewritten from a host repaired within N = ceil($held / 4) = $n light sweeps (ibroute), reported in the log, status, metrics and last_error"

# errors: exit 1, reason on stderr, {"error": ...} alone on stdout with --json
err_case() {	# err_case PATTERN ARGS...: both forms fail with PATTERN
	local pat=$1 out rc
	shift
	out=$("$IBSMCTL" "$@" 2>"$SIM_TMP/err"); rc=$?
	[ "$rc" -ne 0 ] && [ -z "$out" ] && grep -q "$pat" "$SIM_TMP/err" ||
		fail "ibsmctl $*: exit $rc, stdout '$out', stderr '$(cat "$SIM_TMP/err")'"
	out=$("$IBSMCTL" --json "$@" 2>"$SIM_TMP/err"); rc=$?
	[ "$rc" -eq 1 ] && grep -q "$pat" "$SIM_TMP/err" && python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert list(d) == ["error"] and sys.argv[2] in d["error"], d' "$out" "$pat" ||
		fail "ibsmctl --json $*: exit $rc, stdout '$out'"
}
err_case "no switch with GUID, LID or description 'nosuch'" -s "$sock" routes nosuch
err_case "no switch with GUID, LID or description '0x1234'" -s "$sock" routes 0x1234
err_case "usage: routes SWITCH" -s "$sock" routes
err_case "lids takes no arguments" -s "$sock" lids extra
err_case "verify takes no arguments" -s "$sock" verify extra
err_case "unknown command 'frobnicate'" -s "$sock" frobnicate
err_case "nosuch.sock" -s "$SIM_TMP/nosuch.sock" status
err_case "bad option '--frob'" --frob status
err_case "option '--socket' wants a value" --socket
err_case "no command given" -s "$sock"
pass "errors (bad switch, bad arguments, unknown command, no daemon, bad options): exit 1, --json {\"error\": ...}"

# a rejected reload: exit 1, shown in status, the old policy runs; a good one clears it
printf 'sm:\n  priority: 99\n' >"$policy"
out=$(ctl reload 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q 'policy.yaml:2' <<<"$out" || fail "reload of a bad policy: exit $rc ($out)"
ctl --json status | pyjson '
e = d["last_error"]
assert e["kind"] == "reload" and "policy.yaml:2" in e["message"] and e["count"] == 1, e
assert d["priority"] == 7, d["priority"]' || fail "status after a rejected reload: $(ctl --json status | head -c 600)"
ctl status | grep -A3 '^errors: ' | grep -q '^  reload: ' || fail "status text names no reload error: $(ctl status | head -n 12)"
printf 'sm:\n  priority: 9\nsweep:\n  interval_s: 0\n' >"$policy"
ctl reload >/dev/null || fail "reload of a good policy: $(ctl reload 2>&1)"
ctl --json status | pyjson 'assert d["last_error"] is None and d["errors"] == [] and d["priority"] == 9, d["errors"]' ||
	fail "status after a good reload: $(ctl --json status | head -c 600)"
pass "a rejected reload exits 1 and shows in status (old policy runs) until a good reload clears it"

# reloads that take away what a slip would: refused unless --force
good='sm:\n  priority: 9\n  sm_key: 0x5ec7e7\nsweep:\n  interval_s: 0\ndefault_partition:\n  membership: limited\npartitions:\n  - name: t1\n    pkey: 0x0001\n    members: ["H-0", "H-1"]\n'
printf "$good" >"$policy"
ctl reload >/dev/null || fail "reload of a policy with an SM_Key and a partition: $(ctl reload 2>&1)"
refused() {	# refused WHAT PATTERN: a plain reload exits 1 naming PATTERN; status shows it
	local out rc
	out=$(ctl reload 2>&1); rc=$?
	[ "$rc" -eq 1 ] && grep -q "$2" <<<"$out" && grep -q 'reload --force' <<<"$out" ||
		fail "reload of $1: exit $rc ($out)"
	ctl --json status | pyjson "
e = d['last_error']
assert e['kind'] == 'reload' and '$2' in e['message'], e
assert d['priority'] == 9, d['priority']" || fail "status after the reload of $1: $(ctl --json status | head -c 600)"
}
: >"$policy"
refused "an empty policy file" "the file sets nothing"
printf 'sm:\n  priority: 9\nsweep:\n  interval_s: 0\npartitions:\n  - name: t1\n    pkey: 0x0001\n    members: ["H-0", "H-1"]\n' >"$policy"
refused "a policy without the SM_Key" "drops sm.sm_key"
printf 'sm:\n  priority: 9\n  sm_key: 0x5ec7e7\nsweep:\n  interval_s: 0\ndefault_partition:\n  membership: full\npartitions:\n  - name: t1\n    pkey: 0x0001\n    members: ["H-0", "H-1"]\n' >"$policy"
refused "a policy whose default partition is full" "full member of the default partition"
printf 'sm:\n  priority: 9\n  sm_key: 0x5ec7e7\nsweep:\n  interval_s: 0\n' >"$policy"
refused "a policy without partitions" "drops every partition"
kill -HUP "$daemon"
wait_until 10 grep -q 'SIGHUP: policy not reloaded: .*drops every partition.*reload --force' "$log" ||
	fail "SIGHUP with a policy without partitions: $(grep SIGHUP "$log" | tail -n 2)"
ctl --json status | pyjson 'assert d["priority"] == 9 and d["last_error"]["kind"] == "reload"' ||
	fail "status after SIGHUP: $(ctl --json status | head -c 600)"
printf 'sm:\n  priority: 11\nsweep:\n  interval_s: 0\n' >"$policy"
out=$(ctl --json reload --force) || fail "reload --force: $out"
ctl --json status | pyjson 'assert d["last_error"] is None and d["priority"] == 11, d' ||
	fail "status after reload --force: $(ctl --json status | head -c 600)"
grep -q 'policy reload forced: .*drops sm.sm_key' "$log" || fail "no log line for the forced reload"
: >"$policy"
ctl reload --force >/dev/null || fail "reload --force of an empty file: $(ctl reload --force 2>&1)"
ctl --json status | pyjson 'assert d["last_error"] is None and d["priority"] == 0, d' ||
	fail "status after reload --force of an empty file: $(ctl --json status | head -c 600)"
err_case "reload: unknown argument '--forse' (only --force)" -s "$sock" reload --forse
printf 'sm:\n  priority: 9\nsweep:\n  interval_s: 0\n' >"$policy"
ctl reload >/dev/null || fail "reload after the forced ones: $(ctl reload 2>&1)"
pass "reloads of an empty file, or dropping the SM_Key, every partition or the default partition's limited membership, refused (ibsmctl and SIGHUP) until --force"

# a verify asked as the daemon stops (it may be cancelled mid-read): no leak, no error
"$IBSMCTL" -s "$sock" verify >/dev/null 2>&1 &
kill -TERM "$daemon"
wait_pid "$daemon" 10 || fail "ibsmd did not stop on SIGTERM"
grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error' "$log" && fail "ASan/UBSan: $(grep -m1 -A3 'ERROR\|runtime error' "$log")"
pass "ASan ibsmd stopped cleanly"
