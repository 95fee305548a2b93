#!/bin/bash
# Restart: a second bring-up on a fresh ibsim of the same fabric, its net file
# reordered and one host added, with the same state directory, gives every old
# port the LID it had (LIDs read with ibnetdiscover, not from ibsmd's files).
. "$(dirname "$0")/common.sh"

gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$SIM_TMP/a.net"
gen --shuffle 17 --add-host ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$SIM_TMP/b.net"
cmp -s "$SIM_TMP/a.net" "$SIM_TMP/b.net" && fail "the reordered file is identical"
# Give the added host a GUID that sorts before every old CA: a fresh
# assignment (GUID order) would then move the old CAs up by one LID.
last=$(grep -o 'caguid=0x[0-9a-f]*' "$SIM_TMP/b.net" | sort | tail -n 1)
sed -i "s/^$last\$/caguid=0x0002c90100000f00/" "$SIM_TMP/b.net"
grep -q '^caguid=0x0002c90100000f00$' "$SIM_TMP/b.net" || fail "could not renumber the added host"
state="$SIM_TMP/state"
state2="${RESTART_STATE2:-$state}"	# RESTART_STATE2=/elsewhere shows the test can fail

sim_start "$SIM_TMP/a.net"
ibsmd_once H-0 "$state" || fail "first bring-up failed: $(tail -n 3 "$SIM_TMP/once.err")"
check_up "$SIM_TMP/first"
python3 "$SIM_LIDS" "$SIM_TMP/first.topo" >"$SIM_TMP/first.lids"
sim_stop

sim_start "$SIM_TMP/b.net"
ibsmd_once H-0 "$state2" || fail "second bring-up failed: $(tail -n 3 "$SIM_TMP/once.err")"
check_up "$SIM_TMP/second"
python3 "$SIM_LIDS" "$SIM_TMP/second.topo" >"$SIM_TMP/second.lids"
sim_stop

old=$(wc -l <"$SIM_TMP/first.lids")
new=$(wc -l <"$SIM_TMP/second.lids")
[ "$new" -eq $((old + 1)) ] || fail "expected $((old + 1)) ports with LIDs, found $new"
changed=$(join "$SIM_TMP/first.lids" "$SIM_TMP/second.lids" | awk '$2 != $3' | wc -l)
kept=$(join "$SIM_TMP/first.lids" "$SIM_TMP/second.lids" | awk '$2 == $3' | wc -l)
[ "$changed" -eq 0 ] && [ "$kept" -eq "$old" ] ||
	fail "$changed old ports changed LID ($(join "$SIM_TMP/first.lids" "$SIM_TMP/second.lids" | awk '$2 != $3' | head -n 3 | tr '\n' ';'))"
added=$(join -v 2 "$SIM_TMP/first.lids" "$SIM_TMP/second.lids")
pass "all $kept old ports kept their LIDs; the added host got $added"
