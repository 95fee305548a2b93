#!/bin/bash
# Multicast trees follow the members and the links: a 2-level
# tree of 16 hosts (H-0..H-3 on leaf L0-S0, ...), ibsmd on H-15 with its
# MADs counted by libmaddrop.  Judged from infiniband-diags output only
# (tests/sim/mcast_check.py over ibnetdiscover and `ibroute -M` of every
# switch) and from mcjoin's answers:
#  1. H-0, H-5, H-10, H-14 join the broadcast group, H-1 creates a group
#     with MGID 0 and H-6 joins it: two loop-free trees covering exactly
#     their members;
#  2. H-10 leaves the broadcast group, H-6 then H-1 leave the other (its
#     last full member: the group is deleted, saquery -g no longer lists
#     it): the broadcast tree shrinks to H-0, H-5, H-14, the deleted
#     group's MLID is in no MFT, and at each leave the MFT Sets (0x001B)
#     equal the MFT blocks that changed between the dumps before and after;
#  3. ibsim's console unlinks the broadcast tree's uplink of L0-S0: the
#     tree is rebuilt over the links left, for the same members, and again
#     only the blocks that changed are written (at least one).
# T_MCAST_SM=opensm runs the same steps against OpenSM (a development aid:
# its Set counts are printed, not judged).
. "$(dirname "$0")/mcast_lib.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
SM=${T_MCAST_SM:-ibsmd}

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
sim_start "$net"

export MADDROP_COUNT="$SIM_TMP/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
if [ "$SM" = opensm ]; then
	mkdir -p "$SIM_TMP/osm"
	opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
	sed -i -e 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
	OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		on_host_bg H-15 opensm -F "$SIM_TMP/osm/opensm.conf" \
		-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
else
	SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-15 "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/sock" \
		--log-level info >"$SIM_TMP/ibsmd.log" 2>&1
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" ||
		fail "ibsmd: no subnet up: $(tail -n 3 "$SIM_TMP/ibsmd.log")"
fi
SM_PID=$SIM_LAST_PID

# count KEY: the SM's MADs counted by libmaddrop (the hosts' tools are not
# preloaded with it)
count() { cat "$SIM_TMP"/count.* 2>/dev/null | awk -v k="$1" '$1 == k { n += $2 } END { print n + 0 }'; }
mft_sets() { echo $(($(count class_0x01_method_0x02_attr_0x001b) + $(count class_0x81_method_0x02_attr_0x001b))); }
smps() { echo $(($(count class_0x01_method_0x01) + $(count class_0x01_method_0x02) + $(count class_0x81_method_0x01) + $(count class_0x81_method_0x02))); }
# stable: until the SM's SMP count stays for 0.5 s (the counts lag 100 ms)
stable() {
	local a b
	b=$(smps)
	while :; do
		sleep 0.5
		a=$(smps)
		[ "$a" = "$b" ] && break
		b=$a
	done
	kill -0 "$SM_PID" 2>/dev/null || fail "$SM exited: $(tail -n 3 "$SIM_TMP"/ibsmd.log "$SIM_TMP"/osm/out 2>/dev/null)"
}
# only_changed WHAT BEFORE AFTER SETS_BEFORE: the MFT Sets since SETS_BEFORE
# equal the blocks that differ between the dumps BEFORE and AFTER
only_changed() {
	local what=$1 sets changed
	sets=$(($(mft_sets) - $4))
	python3 "$MCAST_CHECK" blocks "$2.mft" "$3.mft" >"$3.blocks" || fail "mcast_check.py blocks"
	changed=$(tail -n 1 "$3.blocks")
	CHANGED=$changed SETS=$sets
	[ "$SM" = opensm ] && { note "opensm: $what: $sets MFT Sets, $changed blocks changed"; return; }
	[ "$sets" = "$changed" ] ||
		fail "$what: $sets MFT Sets for $changed changed blocks ($(head -n 4 "$3.blocks" | paste -sd ';'))"
}

# 1. joins
BM="H-0 H-5 H-10 H-14"
for h in $BM; do mc_join "$h" --mgid "$BCAST" --qkey 0x0b1b; done
MLID=$MC_MLID
mc_join H-1 --mgid 0 --qkey 0x1234
MLID2=$MC_MLID MGID2=$MC_MGID
mc_join H-6 --mgid "$MGID2"
trees_ok "$SIM_TMP/d1" 10 "$MLID=${BM// /,}" "$MLID2=H-1,H-6"
stable
mcast_ok "$SIM_TMP/d1" "$MLID=${BM// /,}" "$MLID2=H-1,H-6" || fail "the trees changed once the SM was quiet"
s1=$(mft_sets)
pass "$SM: $BCAST (MLID $MLID) with $BM, $MGID2 (MLID $MLID2) with H-1 H-6: loop-free trees covering exactly their members ($s1 MFT Sets so far)"

# 2. leaves, one at a time: a block may change at each (all MLIDs below
# 0xC020 share block 0), so each leave is judged against the dump before it
prev="$SIM_TMP/d1" sets_before=$s1 n=0 SUM_SETS=0 SUM_CHANGED=0
leave_step() {
	n=$((n + 1))
	mc_leave "$1" --mgid "$2"
	stable
	mft_dump "$SIM_TMP/l$n"
	only_changed "the leave of $1 from $2" "$prev" "$SIM_TMP/l$n" "$sets_before"
	SUM_SETS=$((SUM_SETS + SETS)) SUM_CHANGED=$((SUM_CHANGED + CHANGED))
	prev="$SIM_TMP/l$n" sets_before=$(mft_sets)
}
leave_step H-10 "$BCAST"
leave_step H-6 "$MGID2"
leave_step H-1 "$MGID2"
on_host H-0 saquery -g 2>&1 | grep -q "$MGID2" && fail "$MGID2 is still listed by saquery -g after its last member left"
BM="H-0 H-5 H-14"
trees_ok "$SIM_TMP/d2" 10 "$MLID=${BM// /,}" "$MLID2="
cmp -s "$prev.mft" "$SIM_TMP/d2.mft" || fail "the MFTs changed after the last leave was judged"
s2=$(mft_sets)
pass "$SM: after H-10 left, the broadcast tree covers exactly $BM; $MGID2 deleted with its last member, MLID $MLID2 in no MFT; $SUM_SETS MFT Sets for $SUM_CHANGED blocks changed by the three leaves"

# 3. a link of the tree fails
up=$(python3 "$MCAST_CHECK" ports --topo "$SIM_TMP/d2.topo" --mft "$SIM_TMP/d2.mft" \
	--switch L0-S0 --mlid "$MLID" | awk '$1 > 4' | head -n 1)
[ -n "$up" ] || fail "L0-S0 has no uplink in MLID $MLID's tree (H-0 is on it)"
sim_cmd "Unlink \"L0-S0\"[$up]" >/dev/null
trees_ok "$SIM_TMP/d3" 15 "$MLID=${BM// /,}"
stable
mcast_ok "$SIM_TMP/d3" "$MLID=${BM// /,}" || fail "the trees changed once the SM was quiet"
only_changed "Unlink" "$SIM_TMP/d2" "$SIM_TMP/d3" "$s2"
[ "$CHANGED" -gt 0 ] || fail "the tree over a lost link changed no MFT block"
pass "$SM: after Unlink \"L0-S0\"[$up], the broadcast tree is rebuilt over the links left for $BM ($(sed -n 's/^mlid [^:]*: \([0-9]* switches\).*/\1/p' "$SIM_TMP/d3.check")); $SETS MFT Sets for $CHANGED changed blocks"
