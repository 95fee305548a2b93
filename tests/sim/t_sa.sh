#!/bin/bash
# The SA (sm/sa/sa_server.c) under ibsim, judged with infiniband-diags and compared
# with OpenSM's answers on a fresh ibsim of the same fabric: a two-level
# tree whose leaf L0-S1 has 1x uplinks under 4x host links, so that a
# PathRecord's rate across the tree must come from the routed path.
#   sminfo; saquery NodeRecord by LID; saquery -p --src-to-dst for a pair
#   on one leaf and one across the tree (same SL, MTU, rate, P_Key,
#   reversibility as OpenSM); saquery -s; LinkRecord, SwitchInfoRecord,
#   LFTRecord, GUIDInfoRecord, ClassPortInfo by LID; smpquery; InformInfoRecord
#   after ibsm-listen subscribed.
# LIDs, not names: a name is resolved with a NodeRecord GetTable, which
# ibsim cuts to one MAD.
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 4 --leaves 2 --spines 2 --hosts-per-leaf 2 -o "$net"
# the uplinks of leaf L0-S1 (ports 3 and 4) and their spine ends: 1x
python3 - "$net" <<'EOF' || fail "cannot narrow the uplinks"
import re, sys
path = sys.argv[1]
out, node = [], None
for line in open(path):
    m = re.match(r'Switch\s+\d+\s+"([^"]+)"', line)
    if m:
        node = m.group(1)
    m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
    if m and ((node == "L0-S1" and m.group(2).startswith("L1-")) or
              (node and node.startswith("L1-") and m.group(2) == "L0-S1")):
        line = line.rstrip("\n") + " w=1\n"
    out.append(line)
open(path, "w").write("".join(out))
EOF
grep -q 'w=1' "$net" || fail "no narrowed link in $net"

# queries HOST OUT: the answers of the SA (ibsmd's or OpenSM's), asked from HOST
declare -A LID
queries() {
	local h=$1 out=$2
	{
		echo "== sminfo"; on_host "$h" sminfo 2>&1 | sed 's/sm guid [^,]*,//; s/ activity count [0-9]*//'
		for n in H-0 H-3; do
			echo "== NodeRecord $n"
			on_host "$h" saquery NR "${LID[$n]}" 2>&1
		done
		echo "== PathRecord same leaf"
		on_host "$h" saquery -p --src-to-dst "${LID[H-0]}:${LID[H-1]}" 2>&1
		echo "== PathRecord across"
		on_host "$h" saquery -p --src-to-dst "${LID[H-0]}:${LID[H-3]}" 2>&1
		echo "== PathRecord back"
		on_host "$h" saquery -p --src-to-dst "${LID[H-3]}:${LID[H-0]}" 2>&1
		echo "== isSM"; on_host "$h" saquery -s 2>&1
		echo "== LinkRecord"; on_host "$h" saquery LR "${LID[H-0]}" 2>&1
		echo "== SwitchInfoRecord"; on_host "$h" saquery SWIR "${LID[L0-S0]}" 2>&1
		echo "== LFTRecord"; on_host "$h" saquery LFTR "${LID[L0-S0]}" 2>&1
		echo "== GUIDInfoRecord"; on_host "$h" saquery GIR "${LID[H-0]}" 2>&1
		echo "== ClassPortInfo"; on_host "$h" saquery -c 2>&1
		echo "== smpquery"; on_host "$h" smpquery portinfo "${LID[H-3]}" 1 2>&1
	} >"$out"
}

# field FILE SECTION NAME: the values of NAME in one section of a dump
field() {
	awk -v s="== $2" -v n="$3" '
		/^== / { on = ($0 == s) }
		on { sub(/^[ \t]+/, ""); if (index($0, n ".") == 1) { sub(/^[^.]*\.+/, ""); print } }' "$1"
}

lids() {	# LID[name] from an ibnetdiscover dump (lids_of.py: GUID LID)
	local p=$1 g l n
	sim_dump "$p" || fail "cannot dump the fabric"
	python3 "$SIM_LIDS" "$p.topo" >"$p.lids" || fail "lids_of.py $p.topo"
	while read -r g l; do
		g=$(printf '0x%016x' "$g")
		for n in H-0 H-1 H-3; do
			[ "$g" = "$(host_guid "$n")" ] && LID[$n]=$l
		done
		[ "$g" = 0x0002c90100000000 ] && LID[L0-S0]=$l
	done <"$p.lids"
	for n in H-0 H-1 H-3 L0-S0; do
		[ -n "${LID[$n]:-}" ] || fail "no LID for $n in $p.topo"
	done
}

# subscribe NAME: ibsm-listen on H-3 subscribes to trap 64 (for InformInfoRecord)
subscribe() {
	on_host_bg H-3 "$LISTEN" --trap 64 >"$SIM_TMP/$1.listen" 2>"$SIM_TMP/$1.listen.err"
	LPID=$SIM_LAST_PID
	wait_until 10 grep -q 'subscribed with the SM' "$SIM_TMP/$1.listen.err" ||
		fail "$1: ibsm-listen did not subscribe: $(cat "$SIM_TMP/$1.listen.err")"
}

# ---- ibsmd ----
sim_start "$net"
on_host_bg H-2 "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/ibsmd.sock" --log-level info >"$SIM_TMP/ibsmd.log" 2>&1
wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" || fail "ibsmd: no subnet up"
lids "$SIM_TMP/ibsmd"
queries H-1 "$SIM_TMP/ibsmd.sa"	# saquery -s with no listener attached
subscribe ibsmd
{ echo "== InformInfoRecord"; on_host H-1 saquery IIR 2>&1; } >>"$SIM_TMP/ibsmd.sa"
sim__stop_pid "$LPID"
sim_stop
declare -A LIDA	# ibsmd's LIDs (OpenSM's may differ)
for n in "${!LID[@]}"; do LIDA[$n]=${LID[$n]}; done

# ---- OpenSM, on a fresh ibsim of the same fabric ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-2 opensm -F "$SIM_TMP/osm/opensm.conf" -f "$SIM_TMP/osm/opensm.log" \
	>"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
lids "$SIM_TMP/opensm"
queries H-1 "$SIM_TMP/opensm.sa"	# saquery -s with no listener attached
subscribe opensm
{ echo "== InformInfoRecord"; on_host H-1 saquery IIR 2>&1; } >>"$SIM_TMP/opensm.sa"
sim__stop_pid "$LPID"
sim_stop

A="$SIM_TMP/ibsmd.sa" B="$SIM_TMP/opensm.sa"
smi() { sed -n 's/^sminfo: sm lid [0-9]* *//p' "$1"; }	# "priority P state S NAME"
grep -q 'SMINFO_MASTER' "$A" && [ "$(smi "$A")" = "$(smi "$B")" ] ||
	fail "sminfo: '$(smi "$A")', OpenSM '$(smi "$B")'"
pass "sminfo names a master, priority and state as OpenSM's ($(smi "$A"))"

# The PathRecords: SL, MTU, rate, P_Key, reversibility as OpenSM's
for sec in "PathRecord same leaf" "PathRecord across" "PathRecord back"; do
	for f in sl mtu rate pkey num_path_revers; do
		a=$(field "$A" "$sec" "$f"); b=$(field "$B" "$sec" "$f")
		[ -n "$a" ] || fail "$sec: no $f from ibsmd: $(sed -n "/== $sec/,/== /p" "$A" | head -n 30)"
		[ "$a" = "$b" ] || fail "$sec: $f is '$a', OpenSM says '$b'"
	done
	note "$sec: rate $(field "$A" "$sec" rate), mtu $(field "$A" "$sec" mtu), packetlifetime $(field "$A" "$sec" pkt_life) (OpenSM $(field "$B" "$sec" pkt_life))"
done
[ "$(field "$A" "PathRecord same leaf" rate)" != "$(field "$A" "PathRecord across" rate)" ] ||
	fail "the rate across the 1x uplinks is the same leaf's: $(field "$A" "PathRecord across" rate)"
pass "PathRecords: SL, MTU, rate, P_Key, reversibility as OpenSM's; the 1x uplink sets the rate across"

# NodeRecords by LID: every field as OpenSM gives it
for n in H-0 H-3; do
	for f in lid node_type num_ports sys_guid node_guid port_guid port_num vendor_id device_id revision partition_cap NodeDescription base_version class_version; do
		a=$(field "$A" "NodeRecord $n" "$f"); b=$(field "$B" "NodeRecord $n" "$f")
		[ -n "$a" ] || fail "NodeRecord $n: no $f in ibsmd's answer: $(sed -n "/== NodeRecord $n/,/== /p" "$A")"
		[ "$f" = lid ] && { [ "$a" = "${LIDA[$n]}" ] || fail "NodeRecord $n: lid $a, not ${LIDA[$n]}"; continue; }
		[ "$a" = "$b" ] || fail "NodeRecord $n: $f is '$a', OpenSM says '$b'"
	done
done
pass "NodeRecord by LID as OpenSM's"

# saquery -s: the IsSM port is the SM's, as its PortInfo says
# (one record, as OpenSM's answer has one)
issm() { sed -n '/^== isSM$/,/^== /p' "$1" | sed -n 's/.*EndPortLid\.*//p'; }
a=$(issm "$A")
[ -n "$a" ] && [ "$a" = "$(sed -n 's/.*sm lid \([0-9]*\) .*/\1/p' "$A")" ] &&
	[ "$(issm "$B" | wc -l)" -eq 1 ] && [ "$(issm "$B")" = "$(sed -n 's/.*sm lid \([0-9]*\) .*/\1/p' "$B")" ] ||
	fail "saquery -s: $(sed -n '/^== isSM$/,/^== /p' "$A") -- OpenSM: $(sed -n '/^== isSM$/,/^== /p' "$B")"
pass "saquery -s names the SM's port alone, as OpenSM's"

# records by LID: LinkRecord (H-0's link), SwitchInfoRecord, LFTRecord
# (the entries of the switch's own LID and H-0's), GUIDInfoRecord block 0
[ "$(field "$A" LinkRecord FromPort)" = 1 ] && [ "$(field "$A" LinkRecord ToPort)" = 1 ] &&
	[ "$(field "$A" LinkRecord ToLID)" = "${LIDA[L0-S0]}" ] ||
	fail "LinkRecord: $(sed -n '/^== LinkRecord$/,/^== /p' "$A")"
[ "$(field "$A" SwitchInfoRecord LID)" = "${LIDA[L0-S0]}" ] &&
	[ "$(field "$A" SwitchInfoRecord LinearFDBCap)" = "$(field "$B" SwitchInfoRecord LinearFDBCap)" ] ||
	fail "SwitchInfoRecord: $(sed -n '/^== SwitchInfoRecord$/,/^== /p' "$A")"
lft_entry() { sed -n '/^== LFTRecord$/,/^== /p' "$1" | awk -v l="$2" '$1 == l && NF == 2 { print $2 }'; }
[ "$(lft_entry "$A" "${LIDA[L0-S0]}")" = 0 ] && [ "$(lft_entry "$A" "${LIDA[H-0]}")" = 1 ] ||
	fail "LFTRecord: $(sed -n '/^== LFTRecord$/,/^== /p' "$A" | head -n 20)"
g0() { sed -n '/^== GUIDInfoRecord$/,/^== /p' "$1" | sed -n 's/.*GUID 0\.*//p' | head -n 1; }
[ "$(g0 "$A")" = "$(host_guid H-0)" ] && [ "$(g0 "$A")" = "$(g0 "$B")" ] ||
	fail "GUIDInfoRecord: $(g0 "$A"), OpenSM $(g0 "$B")"
cpi() { sed -n '/^== ClassPortInfo$/,/^== /p' "$1" | grep -i "$2"; }
[ -n "$(cpi "$A" 'Base version')" ] && [ "$(cpi "$A" 'Class version')" = "$(cpi "$B" 'Class version')" ] ||
	fail "ClassPortInfo: $(sed -n '/^== ClassPortInfo$/,/^== /p' "$A")"
grep -q '^Lid:\.*'"${LIDA[H-3]}"'$' "$A" || fail "smpquery: $(sed -n '/^== smpquery$/,$p' "$A" | head)"
pass "LinkRecord, SwitchInfoRecord, LFTRecord, GUIDInfoRecord, ClassPortInfo by LID; smpquery"

# InformInfoRecord after ibsm-listen on H-3 subscribed to trap 64: as OpenSM's
iir() { sed -n '/^== InformInfoRecord$/,/^== /p' "$1" | grep -v '^=='; }
[ -n "$(iir "$A" | grep 'trap_num\.*64$')" ] && [ "$(iir "$A")" = "$(iir "$B")" ] ||
	fail "InformInfoRecord: $(iir "$A") -- OpenSM: $(iir "$B")"
pass "InformInfoRecord after a subscription: as OpenSM's"

