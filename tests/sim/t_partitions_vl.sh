#!/bin/bash
# vlane-isolation on ibsim (ibsmd.yaml(5) Partitions, routing/qos/pvl.c): a
# 2-level tree of 16 hosts (2 spines), ibsmd on H-15 routing with ftree (which
# ignores the partitions, so they share links) and three tenants dealt
# round-robin:
#   blue 0x0001 vlane-isolation: H-0 H-4 H-8 H-12
#   red  0x0002 vlane-isolation: H-1 H-5 H-9 H-13
#   rest 0x0003 def-isolation:   H-2 H-6 H-10 H-14 H-3 H-7 H-11
# qos.mode none: blue and red still get VLs 1 and 2 of their own and those
# SLs.  Judged with infiniband-diags: `saquery -p` within blue, red and
# rest answers SL 1, 2, 0; `smpquery sl2vl` maps SL 1 -> VL 1, SL 2 -> VL 2
# on every (in, out) pair into a leaf's and a spine's linked ports and at a
# host; `smpquery
# vlarb` weights VLs 0-2; `ibsmctl verify` on the tables read back: blue
# and red share links, none on their VL.  Then a reload to 2 data VLs:
# strict refuses (routing error naming red), the SM's tables (and so the
# PathRecords' SLs) stay as they were.
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
cat >"$SIM_TMP/p.yaml" <<'EOF2'
sweep: {interval_s: 0}
routing: {isolation_mode: strict}
partitions:
  - {name: blue, pkey: 0x0001, policy: vlane-isolation, members: ["H-0", "H-4", "H-8", "H-12"]}
  - {name: red, pkey: 0x0002, policy: vlane-isolation, members: ["H-1", "H-5", "H-9", "H-13"]}
  - {name: rest, pkey: 0x0003, members: ["H-2", "H-6", "H-10", "H-14", "H-3", "H-7", "H-11"]}
EOF2
sim_start "$net"
on_host_bg H-15 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" -c "$SIM_TMP/p.yaml" -R ftree \
	--log-level info >"$SIM_TMP/ibsmd.log" 2>&1
wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" ||
	fail "ibsmd: no subnet up: $(tail -n 3 "$SIM_TMP/ibsmd.log")"
grep -q 'partitions: blue SL 1, red SL 2 over 8 data VLs' "$SIM_TMP/ibsmd.log" ||
	fail "no partition SL line: $(grep -i partition "$SIM_TMP/ibsmd.log" | head -n 3)"

sim_dump "$SIM_TMP/d" || fail "cannot dump the fabric"
# lid NAME: a host's or switch's LID from the ibnetdiscover dump
lid() {
	sed -n -e "s/^Switch\\s.*# \"$1\".*\\blid \\([0-9]*\\) .*/\\1/p" \
		-e "s/^\\[[0-9]*\\]\\s*\"H-[0-9a-f]*\"\\[1\\].*# \"$1\" lid \\([0-9]*\\) .*/\\1/p" \
		"$SIM_TMP/d.topo" | head -n 1
}
# sl_of SRC DST: the SL of the PathRecord H-SRC asks for SRC -> DST
sl_of() {
	on_host "$1" saquery -p --slid "$(lid "$1")" --dlid "$(lid "$2")" 2>&1 |
		sed -n 's/^\s*sl\.\+\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1
}
for q in "H-0 H-12 1" "H-4 H-8 1" "H-1 H-9 2" "H-13 H-5 2" "H-2 H-7 0"; do
	read -r s d want <<<"$q"
	got=$(sl_of "$s" "$d")
	[ -n "$got" ] && [ $((got)) -eq "$want" ] || fail "saquery -p $s -> $d: SL '$got', want $want"
done
note "saquery -p: SL 1 within blue, 2 within red, 0 within rest"

# sl2vl_ok LID LINKED [OUT...]: every row of `smpquery sl2vl LID [OUT]` (a
# switch: every input port into OUT) from port 0 or a linked port (1 ..
# LINKED) maps SL 1 -> VL 1, SL 2 -> VL 2 and SL 8 -> VL 0 (past ibsim's
# 8 data VLs: ibsmd's table, not ibsim's identity default); a switch's
# in == out rows carry nothing and are not written.  The rows checked on
# stdout.
sl2vl_ok() {
	local lid=$1 linked=$2 out rows=0 o bad
	shift 2
	for o in "${@:-}"; do
		# shellcheck disable=SC2086
		out=$(on_host H-15 smpquery sl2vl "$lid" $o 2>&1) || fail "smpquery sl2vl $lid $o: $out"
		out=$(awk -F'|' -v sw="$o" -v linked="$linked" '/^ports: in/ {
			split($1, w, /[ ,:]+/)
			if (w[3] + 0 <= linked && (sw == "" || w[3] != w[5])) print }' <<<"$out")
		[ -n "$out" ] || fail "smpquery sl2vl $lid $o: no rows"
		bad=$(awk -F'|' '$3 + 0 != 1 || $4 + 0 != 2 || $10 + 0 != 0' <<<"$out")
		[ -z "$bad" ] || fail "smpquery sl2vl $lid $o: rows without SL 1 -> VL 1, SL 2 -> VL 2, SL 8 -> VL 0: $bad"
		rows=$((rows + $(wc -l <<<"$out")))
	done
	echo "$rows"
}
leaf=$(sl2vl_ok "$(lid L0-S0)" 6 1 2 3 4 5 6) || exit 1
spine=$(sl2vl_ok "$(lid L1-S0)" 4 1 2 3 4) || exit 1
sl2vl_ok "$(lid H-4)" 1 >/dev/null || exit 1
note "smpquery sl2vl: SL 1 -> VL 1, SL 2 -> VL 2 on $leaf (in, out) rows into the 6 ports of L0-S0, $spine into the 4 of L1-S0, and at H-4"
vlarb=$(on_host H-15 smpquery vlarb "$(lid L0-S0)" 5 2>&1) || fail "smpquery vlarb: $vlarb"
# the low-priority table's VL row and WEIGHT row, zipped: VLs with a weight
weighted=$(sed -n '/Low priority/,/High priority/p' <<<"$vlarb" | python3 -c '
import sys
rows = {l.split(":")[0].strip(): [int(x, 16) for x in l.split("|")[1:-1]]
        for l in sys.stdin if l.startswith(("VL", "WEIGHT"))}
w = {v for v, x in zip(rows.get("VL", []), rows.get("WEIGHT", [])) if x}
print(" ".join(str(v) for v in range(3) if v in w))')
[ "$weighted" = "0 1 2" ] || fail "smpquery vlarb L0-S0 port 5: VLs 0-2 not all weighted ('$weighted'): $vlarb"
note "smpquery vlarb: VLs 0, 1, 2 weighted (low priority) out of L0-S0 port 5"

out=$("$IBSMCTL" -s "$sock" verify) || fail "ibsmctl verify: $out"
for want in 'verify: partition blue (vlane-isolation): VL 1, shares 0 links on its VL (' \
	    'verify: partition red (vlane-isolation): VL 2, shares 0 links on its VL ('; do
	grep -qF "$want" <<<"$out" || fail "ibsmctl verify: no '$want': $(grep partition <<<"$out")"
done
grep -Eq 'VL 1, shares 0 links on its VL \(([1-9][0-9]*) in all\)' <<<"$out" ||
	fail "ibsmctl verify: blue shares no link at all, the test proves nothing: $(grep blue <<<"$out")"
note "ibsmctl verify: $(grep -o 'partition blue.*' <<<"$out")"

# A reload leaving 2 data VLs (ports.max_op_vls 2): red finds no VL left,
# strict refuses the routing: the routing error names it, and the SM
# keeps its tables: PathRecords still carry the partitions' SLs (a
# refusal that dropped them would answer SL 0).
printf 'ports: {max_op_vls: 2}\n' | cat - "$SIM_TMP/p.yaml" >"$SIM_TMP/p2.yaml"
mv "$SIM_TMP/p2.yaml" "$SIM_TMP/p.yaml"
"$IBSMCTL" -s "$sock" reload >/dev/null || fail "ibsmctl reload"
wait_until 10 grep -q 'no data VL is left of 2' "$SIM_TMP/ibsmd.log" ||
	fail "reload with 2 data VLs: no refusal: $(tail -n 3 "$SIM_TMP/ibsmd.log")"
status=$("$IBSMCTL" -s "$sock" status) || fail "ibsmctl status: $status"
grep -A3 '^errors: ' <<<"$status" |
	grep -q '^  routing: partition red (vlane-isolation) shares links and no data VL is left of 2' ||
	fail "ibsmctl status: no routing error naming red: $status"
for q in "H-0 H-12 1" "H-1 H-9 2"; do
	read -r s d want <<<"$q"
	got=$(sl_of "$s" "$d")
	[ -n "$got" ] && [ $((got)) -eq "$want" ] ||
		fail "strict refusal: saquery -p $s -> $d: SL '$got', want $want (the tables kept)"
done
note "reload to 2 data VLs: routing error 'partition red ... no data VL is left of 2'; PathRecords keep SLs 1 and 2"
pass "vlane partitions on VLs 1 and 2: their SLs in PathRecords, SL2VL and VLArb on the devices, no link shared on their VL; a strict refusal keeps the tables"
