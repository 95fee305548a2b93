#!/bin/bash
# Multicast beside OpenSM: a 2-level tree of 16 hosts
# (H-0..H-3 on leaf L0-S0, ...), the SM on H-15, on a fresh ibsim each for
# OpenSM and for ibsmd.  Before any join, `saquery -g` lists the default
# partition's IPoIB broadcast group (MGID, MTU, rate, P_Key); then H-0, H-5,
# H-10 and H-14 join it with build/mcjoin from their own ports (H-3 as a
# send-only full member: its leaf must be on the tree), H-1 creates
# a group with MGID 0 and H-6 joins that; each member is found with
# `saquery MCMR --mgid --gid` (one record: ibsim cuts a GetTable to one MAD)
# and H-2 is not; `saquery MCMR --mgid` gives the broadcast group's Q_Key;
# `ibroute -M` of every switch forms, per group, a loop-free tree covering
# exactly the members (tests/sim/mcast_check.py).  With OpenSM the checker
# must also catch a corrupted MFT (build/lftset -M adds a non-member port).
# The two SMs' groups, Q_Keys and the end ports of the broadcast tree
# (send-only member included or not) are compared.  T_MCAST_OPENSM_ONLY=1 runs
# the OpenSM half alone.
. "$(dirname "$0")/mcast_lib.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

python3 "$MCAST_CHECK" selftest >"$SIM_TMP/selftest" || {
	cat "$SIM_TMP/selftest" >&2
	fail "mcast_check.py selftest"
}
pass "mcast_check.py: $(tail -n 1 "$SIM_TMP/selftest")"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
BMEMBERS="H-0 H-5 H-10 H-14"

# side NAME: the joins and the checks on the running SM; NAME.groups gets
# what is compared between the SMs
side() {
	local n=$1 out=$SIM_TMP/$1 g mlid mlid2 mgid2 h
	g=$(bcast_group)
	[ -n "$g" ] || fail "$n: saquery -g lists no $BCAST before any join"
	echo "bcast $g" >"$out.groups"
	for h in $BMEMBERS; do
		mc_join "$h" --mgid "$BCAST" --qkey 0x0b1b
	done
	mlid=$MC_MLID
	mc_join H-1 --mgid 0 --qkey 0x1234
	mlid2=$MC_MLID mgid2=$MC_MGID
	case $mgid2 in ""|::) fail "$n: the SA gave no MGID to a create with MGID 0" ;; esac
	mc_join H-6 --mgid "$mgid2"
	[ "$MC_MLID" = "$mlid2" ] || fail "$n: H-6 joined $mgid2 at MLID $MC_MLID, H-1 created it at $mlid2"
	mc_join H-3 --mgid "$BCAST" --join-state 8	# a send-only full member
	# shellcheck disable=SC2086
	members_found "$BCAST" $BMEMBERS
	members_found "$mgid2" H-1 H-6
	member_of "$BCAST" H-2 && fail "$n: H-2 never joined, saquery finds it a member"
	echo "qkey $(group_qkey "$BCAST")" >>"$out.groups"
	pass "$n: saquery -g lists $g before any join; $(wc -w <<<"$BMEMBERS") members of $BCAST (MLID $mlid) and 2 of $mgid2 (MLID $mlid2) found one by one, H-2 not"
	trees_ok "$out" 10 "$mlid=${BMEMBERS// /,}" "$mlid2=H-1,H-6" "--send-only=$mlid=H-3"
	# OpenSM puts a send-only member's port in the tree too: compared
	echo "bcast tree end ports $(sed -n "s/^mlid $mlid: .* \([0-9]*\) end ports.*/\1/p" "$out.check")" >>"$out.groups"
	pass "$n: ibroute -M of every switch: $(grep -c ': ok$' "$out.check") loop-free trees covering exactly their members ($(sed -n 's/^mlid \(0x[0-9a-f]*\): \([0-9]*\) switches.*/\1 over \2 switches/p' "$out.check" | paste -sd ';'))"
	MLID=$mlid MLID2=$mlid2
}

# ---- OpenSM ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i -e 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-15 opensm -F "$SIM_TMP/osm/opensm.conf" \
	-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
side opensm
# the checker on live MFTs: H-1's port on L0-S0 (LID from the dump) added
# to the broadcast group's mask must fail it, as a non-member
leaf=$(sed -n 's/^Switch\s.*# "L0-S0" base port 0 lid \([0-9]*\) .*/\1/p' "$SIM_TMP/opensm.topo")
on_host H-0 "$LFTSET" -M "$leaf" "$MLID" 2 on >"$SIM_TMP/lftset.out" 2>&1 ||
	fail "lftset -M $leaf $MLID 2 on: $(cat "$SIM_TMP/lftset.out")"
mcast_ok "$SIM_TMP/corrupt" "$MLID=${BMEMBERS// /,}" "$MLID2=H-1,H-6" "--send-only=$MLID=H-3" &&
	fail "mcast_check.py passes an MFT that sends $MLID to H-1"
[ "$(grep -c FAIL "$SIM_TMP/corrupt.check")" = 1 ] && grep -q "sends to H-1 .*not a member" "$SIM_TMP/corrupt.check" ||
	fail "mcast_check.py failed for another reason: $(grep FAIL "$SIM_TMP/corrupt.check" | head -n 3)"
pass "opensm: port 2 of L0-S0 (H-1) set in MLID $MLID's mask by an SMP Set: mcast_check.py says 'sends to H-1, not a member', and nothing else"
sim_stop
[ -n "${T_MCAST_OPENSM_ONLY:-}" ] && exit 0

# ---- ibsmd, on a fresh ibsim of the same fabric ----
: >"$SIM_TMP/mcjoin.log"
sim_start "$net"
on_host_bg H-15 "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/sock" --log-level info >"$SIM_TMP/ibsmd.log" 2>&1
wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" ||
	fail "ibsmd: no subnet up: $(tail -n 3 "$SIM_TMP/ibsmd.log")"
side ibsmd
diff "$SIM_TMP/opensm.groups" "$SIM_TMP/ibsmd.groups" >"$SIM_TMP/groups.diff" ||
	fail "ibsmd's broadcast group differs from OpenSM's: $(cat "$SIM_TMP/groups.diff")"
pass "the broadcast group as OpenSM's: $(paste -sd ';' "$SIM_TMP/ibsmd.groups")"
