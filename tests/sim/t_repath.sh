#!/bin/bash
# Repath notices under ibsim, judged with saquery (the SA's PathRecords
# before and after) and two ibsm-listen on hosts of different leaves:
#   - a 2-level tree whose leaf L0-S3 has a 1x link to spine L1-S1 (4x
#     elsewhere): Unlink of L0-S3's link to L1-S0 moves L0-S3's pairs onto
#     the 1x link.  repath-only: each listener gets one 69 per changed pair
#     it is an end of, carrying the new record (DLID, SLID, rate as saquery
#     says); hybrid: one wildcard 69 per listener.
#   - the same tree with no 1x link ("fault one"): an Unlink of a spine
#     link (one whose both ends' trap 128 reach the SM) changes no host-visible field: repath-only and hybrid send
#     nothing; wildcard sends one 69 per listener for the fault, not two
#     for its two trap 128s ("fault two").
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

base="$SIM_TMP/tree.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$base"
narrow="$SIM_TMP/narrow.net"
python3 - "$base" "$narrow" <<'PY' || fail "cannot narrow the link"
import re, sys
out, node = [], None
for line in open(sys.argv[1]):
    m = re.match(r'Switch\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(1)
    m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
    if m and ((node, m.group(2)) in (("L0-S3", "L1-S1"), ("L1-S1", "L0-S3"))):
        line = line.rstrip("\n") + " w=1\n"
    out.append(line)
open(sys.argv[2], "w").write("".join(out))
PY
[ "$(grep -c 'w=1' "$narrow")" -eq 2 ] || fail "expected one narrowed link (two ends) in $narrow"
# the port of L0-S3 that goes to L1-S0, for the Unlink
cut=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } sw == "L0-S3" && /"L1-S0"/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print $1; exit }' "$base")
[ -n "$cut" ] || fail "no link from L0-S3 to L1-S0"
# L0-S0's ports to the spines (fault one cuts the one its traps do not take)
spine_ports=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } sw == "L0-S0" && /"L1-S/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print $1 }' "$base")
[ "$(wc -w <<<"$spine_ports")" -eq 2 ] || fail "L0-S0 should have two spine links: $spine_ports"

SM_HOST=H-4; LISTENERS=(H-0 H-9)	# leaves L0-S0 and L0-S3
log="$SIM_TMP/ibsmd.log"
lid_of() { on_host "$1" smpquery portinfo -D 0 1 2>/dev/null | sed -n 's/^Lid:\.*//p'; }
declare -A LID
# start NET MODE: ibsim, ibsmd with events.signalling MODE, the listeners
start() {
	sim_start "$1"
	printf 'events: {signalling: %s}\nsweep: {interval_s: 1}\n' "$2" >"$SIM_TMP/policy.yaml"
	: >"$log"
	on_host_bg "$SM_HOST" "$IBSMD" -c "$SIM_TMP/policy.yaml" -S "$SIM_TMP/state.$2" \
		-s "$SIM_TMP/ibsmd.sock" --log-level info >"$log" 2>&1
	SMPID=$SIM_LAST_PID
	wait_until 30 grep -q '^subnet up:' "$log" || fail "$2: no subnet up: $(tail -n 3 "$log")"
	for h in H-{0..11}; do LID[$h]=$(lid_of "$h"); done
	LPIDS=()
	for h in "${LISTENERS[@]}"; do
		: >"$SIM_TMP/$h.out"
		on_host_bg "$h" "$LISTEN" --trap 69,68 --check-interval 1 >"$SIM_TMP/$h.out" 2>"$SIM_TMP/$h.err"
		LPIDS+=("$SIM_LAST_PID")
	done
	for h in "${LISTENERS[@]}"; do
		wait_until 10 grep -q 'subscribed with the SM' "$SIM_TMP/$h.err" || fail "$2: $h did not subscribe"
	done
}
stop() {
	for p in "${LPIDS[@]}"; do sim__stop_pid "$p"; done
	sim__stop_pid "$SMPID"
	sim_stop
}
rounds() { grep -c '^.*paths: .* notices' "$log"; }
ups() { grep -c '^subnet up:' "$log"; }
more() { [ "$("$1")" -gt "$2" ]; }	# more COUNTER N
# fault PORT-OF-SWITCH SWITCH: Unlink, wait for the reroute and its round;
# BEFORE[listener] holds the notices each had before, FLINE the log line
declare -A BEFORE
fault() {
	local n r l
	for l in "${LISTENERS[@]}"; do BEFORE[$l]=$(notices "$l"); done
	FLINE=$(($(wc -l <"$log") + 1))
	n=$(ups); r=$(rounds)
	sim_cmd "Unlink \"$2\"[$1]" >/dev/null
	wait_until 10 more ups "$n" ||
		fail "no sweep after Unlink \"$2\"[$1]"
	wait_until 10 more rounds "$r" || fail "no signalling round after the reroute: $(tail -n 3 "$log")"
	sleep 1	# Reports in flight reach the listeners
}
# pr SLID DLID: "rate mtu sl" of the SA's PathRecord
pr() {
	on_host H-1 saquery -p --src-to-dst "$1:$2" 2>/dev/null |
		awk -F. '/^\t\trate/ { r = $NF } /^\t\tmtu/ { m = $NF } /^\t\tsl\./ { s = $NF } END { print r, m, s }'
}
# pairs OUT: every pair with a listener at one end, "SLID DLID rate mtu sl"
pairs() {
	local l h
	for l in "${LISTENERS[@]}"; do
		for h in H-{0..11}; do
			[ "$h" = "$l" ] && continue
			echo "${LID[$l]} ${LID[$h]} $(pr "${LID[$l]}" "${LID[$h]}")"
			echo "${LID[$h]} ${LID[$l]} $(pr "${LID[$h]}" "${LID[$l]}")"
		done
	done | sort -u >"$1"
}
notices() { grep -c '"trap":69' "$SIM_TMP/$1.out" 2>/dev/null || true; }
since() { echo $(($(notices "$1") - ${BEFORE[$1]})); }
# heavy sweeps the fault's traps asked for
fault_sweeps() { tail -n +"$FLINE" "$log" | grep -c 'heavy sweep: trap 128'; }

# ---- 1. repath-only on the narrowed tree ----
start "$narrow" repath-only
pairs "$SIM_TMP/before"
fault "$cut" L0-S3
pairs "$SIM_TMP/after"
join -j1 <(awk '{ print $1 "-" $2, $3 }' "$SIM_TMP/before") <(awk '{ print $1 "-" $2, $3 }' "$SIM_TMP/after") |
	awk '$2 != $3 { print $1, $3 }' >"$SIM_TMP/changed"
nchanged=$(wc -l <"$SIM_TMP/changed")
[ "$nchanged" -gt 0 ] || fail "saquery shows no changed rate: the fault did not move a pair onto the 1x link"
for l in "${LISTENERS[@]}"; do
	# what saquery says changed with this listener at one end, and what it was told
	awk -v me="${LID[$l]}" '{ split($1, p, "-"); if (p[1] == me || p[2] == me) print $1, $2 }' "$SIM_TMP/changed" | sort >"$SIM_TMP/$l.want"
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    n = json.loads(line)
    if n["trap"] == 69 and not n["wildcard"]:
        print("%d-%d 0x%x" % (n["slid"], n["dlid"], n["rate"]))' "$SIM_TMP/$l.out" | sort >"$SIM_TMP/$l.got"
	want=$(awk '{ print $1 }' "$SIM_TMP/$l.want" | tr '\n' ' ')
	got=$(awk '{ print $1 }' "$SIM_TMP/$l.got" | tr '\n' ' ')
	[ -n "$want" ] || fail "$l is at no changed pair: the test's fabric does not exercise it"
	[ "$want" = "$got" ] || fail "$l: pairs told ($got) are not the pairs saquery shows changed ($want)"
	# the rate each notice carries is saquery's new rate (saquery prints 0x-less decimal? compare numerically)
	python3 - "$SIM_TMP/$l.want" "$SIM_TMP/$l.got" <<'PY' || fail "$l: a notice's rate is not saquery's"
import sys
want = dict(l.split() for l in open(sys.argv[1]))
got = dict(l.split() for l in open(sys.argv[2]))
for k, v in want.items():
    if int(v, 0) & 0x3f != int(got[k], 0) & 0x3f:
        sys.exit("%s: saquery %s, notice %s" % (k, v, got[k]))
PY
	pass "repath-only: $l told exactly the $(wc -l <"$SIM_TMP/$l.want") changed pairs it is an end of, with saquery's new rate"
done
r=$(tail -n +"$FLINE" "$log" | grep 'paths: ' | grep -v ' 0 repath, 0 unpath' | tail -n 1)
note "repath-only, one fault: $nchanged pairs with a listener at one end changed; ibsmd: ${r#*paths: }"
stop

# ---- 2. hybrid on the narrowed tree ----
start "$narrow" hybrid
fault "$cut" L0-S3
for l in "${LISTENERS[@]}"; do
	[ "$(since "$l")" -eq 1 ] && tail -n 1 "$SIM_TMP/$l.out" | grep -q '"wildcard":true' ||
		fail "hybrid: $l got $(since "$l") notices, want one wildcard: $(cat "$SIM_TMP/$l.out")"
done
pass "hybrid: one wildcard repath per listener for the fault"
stop

# ---- 3. fault one on the uniform tree, in each mode ----
for mode in repath-only hybrid wildcard; do
	start "$base" "$mode"
	# both ends' trap 128 must reach the SM: cut the spine link L0-S0 does not route the SM's LID through
	toward=$(on_host H-1 ibroute -D 0,1 "${LID[$SM_HOST]}" "${LID[$SM_HOST]}" 2>/dev/null | awk '/^0x/ { print $2 + 0 }')
	one=$(for p in $spine_ports; do [ "$p" != "$toward" ] && echo "$p"; done | head -n 1)
	[ -n "$toward" ] && [ -n "$one" ] || fail "cannot tell L0-S0's way to the SM ($toward)"
	fault "$one" L0-S0
	traps=$(tail -n +"$FLINE" "$log" | grep -c 'trap 128 from')
	[ "$traps" -ge 2 ] || fail "$mode: $traps trap 128 logged for the fault, want both ends'"
	
	[ "$(fault_sweeps)" -eq 1 ] || fail "$mode: the fault's two trap 128s made $(fault_sweeps) heavy sweeps, want 1"
	want=0; [ "$mode" = wildcard ] && want=1
	for l in "${LISTENERS[@]}"; do
		[ "$(since "$l")" -eq "$want" ] ||
			fail "$mode, fault one: $l got $(since "$l") notices, want $want: $(cat "$SIM_TMP/$l.out")"
	done
	pass "$mode, fault one (Unlink \"L0-S0\"[$one], $traps trap 128s): one sweep, one round, $want notices per listener"
	stop
done
