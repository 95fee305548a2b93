#!/bin/bash
# Every SA record type saquery knows, from ibsmd and from OpenSM on a fresh
# ibsim of the same fabric, compared field by field.  A two-level tree
# (2 leaves under 1 spine, 2 hosts each), the SM on H-3, the questions
# from H-0; H-0 and H-1 join the IPoIB broadcast group first (mcjoin), so
# that the MulticastForwardingTableRecords have ports.  OpenSM runs first;
# ibsmd then starts with OpenSM's LIDs (its guid2lid turned into ibsmd's
# state file), so that every answer names the same LIDs.
#
# Each type is one row of TYPES: asked by LID (every LID in turn), as a
# whole table, or, for PathRecords, between pairs; a GetTable of every
# record is cut to one MAD by ibsim (DEVELOPERS.md), so asking by LID is
# what sees every record.  P_KeyTableRecords go only to a trusted
# requester: OpenSM's sa_key is 1 (its default), ibsmd is given the
# same (sa.sa_key).
#
# What is legitimately different is normalised by name (sa_compare.py's
# NORMS), each counted in the pass line when it made two answers equal:
#   actcount    SMInfo's ActCount counts the SMPs each SM sent;
#   cpi         ClassPortInfo's CapabilityMask and CapabilityMask2 name what
#               each SA implements;
#   pkt-life    OpenSM answers its packet_life_time option (18) for every
#               path, ibsmd the path's own, from its hops and the switches'
#               LifeTimeValue (ARCHITECTURE.md);
#   pktr-block  OpenSM writes a PKeyTableRecord's BlockNum in host byte
#               order (little-endian here) and saquery prints it raw; ibsmd
#               in network order (IBA vol. 1 15.2.5.11), which saquery
#               shows byte-swapped (256 for block 1);
#   sl2vl-cut   of a full MAD of SLtoVLMappingTableRecords (12), saquery
#               under ibsim shows the last one's table (MAD bytes 240-247)
#               as leftover memory, other values each run, for either SM.
# Nothing else may differ: a switch port's PortInfoRecord as read (its
# LocalPortNum, CapabilityMask) with what the SM's Set answered (HOQLife),
# SwitchInfoRecord's LifeTimeValue as written (ports.switch_lifetime, as
# OpenSM's packet_life_time), every GUIDInfo block of a port's GUIDCap.
# Both SMs hold SA key 1 (ibsmd: sa.sa_key) and are asked with it, so
# both see a trusted requester; MCMR is asked once more without a key
# (untrusted: the groups with no PortGID, JoinState or ProxyJoin,
# IBA vol. 1 15.2.5.17, OpenSM's rule and ibsmd's).
# ibsim never ACKs an RMPP answer (DEVELOPERS.md), so ibsmd resends a long
# table's first segment for about a second, and the next saquery can
# receive it in place of its own answer: after a question answered with
# more than one record the test waits until ibsmd's SA has no answer in
# transfer (sa.rmpp.sending), as it is once a client ACKs.
. "$(dirname "$0")/mcast_lib.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

# type ASK: lid (TYPE LID for every LID), all (TYPE), untrusted (TYPE
# without SM_Key), pairs (saquery -p
# --slid --dlid from H-0 and from H-2, on the other leaf, to every LID).
TYPES="
NR lid
PIR lid
SL2VL lid
PKTR lid
VLAR lid
LFTR lid
MFTR all
SMIR lid
SWIR lid
LR lid
IIR all
MCMR all
MCMR untrusted
GIR lid
SR all
PR pairs
ClassPortInfo all
"
SM_HOST=H-3 ASKER=H-0 CTL= SM_KEY=1	# OpenSM's sa_key default, given to ibsmd too (sa.sa_key)

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$net"

# lids G2L: the LIDs of a guid2lid file (OpenSM's format), one a line
lids() { awk '/^0x/ { printf "%d\n", $2 }' "$1" | sort -n; }

# ask SMKEY OUT: every question of TYPES from $ASKER, answers in OUT
ask() {
	local key=$1 out=$2 t how l m r
	: >"$out"
	while read -r t how; do
		[ -n "$t" ] || continue
		case $how in
		lid) for l in $LIDS; do
			r=$(sq "$key" "$t" "$l") || fail "saquery $t $l: $r"
			printf '### %s %s\n%s\n' "$t" "$l" "$r" >>"$out"
		     done ;;
		all) r=$(sq "$key" "$t") || fail "saquery $t: $r"
		     printf '### %s\n%s\n' "$t" "$r" >>"$out" ;;
		untrusted) r=$(sq 0 "$t") || fail "saquery $t (no SM_Key): $r"
		     printf '### %s untrusted\n%s\n' "$t" "$r" >>"$out" ;;
		pairs) for l in $PR_FROM; do for m in $LIDS; do
			r=$(sq "$key" -p --slid "$l" --dlid "$m") || fail "saquery -p $l $m: $r"
			printf '### PR %s %s\n%s\n' "$l" "$m" "$r" >>"$out"
		       done; done ;;
		esac
	done <<<"$TYPES"
}

# sq SMKEY ARGS...: saquery's answer; an error status is an answer too.
# saquery under umad2sim dies now and then (SIGSEGV) on a table longer
# than one MAD, from either SM, and passes the same question asked again:
# asked up to 3 times, each death counted in $SIM_TMP/deaths.
sq() {
	local key=$1 out rc try
	shift
	for try in 1 2 3; do
		out=$(on_host "$ASKER" saquery --smkey "$key" "$@" 2>&1)
		rc=$?
		# one record fits one MAD: no transfer to wait for
		if [ $rc -ge 128 ] || [ "$(grep -c 'Record dump:$' <<<"$out")" -gt 1 ]; then
			settle
		fi
		[ $rc -lt 128 ] && break
		echo "$*" >>"$SIM_TMP/deaths"
	done
	[ $rc -ge 128 ] && { echo "saquery died (signal $((rc - 128))) 3 times"; return 1; }
	printf '%s\n' "$out" | grep -v '^\s*$' || true
}

# settle: ibsmd's SA has no answer in transfer (nothing to wait for with OpenSM)
rmpp_idle() { [ "$(status_field "$CTL" sa.rmpp.sending)" = 0 ]; }
settle() {
	[ -n "$CTL" ] || return 0
	wait_until 5 rmpp_idle || fail "ibsmd: an RMPP answer still sending after 5 s"
}

# join: H-0 and H-1 in the broadcast group, then time for the MFT writes
join() {
	mc_do join H-0 --mgid "$BCAST"
	mc_do join H-1 --mgid "$BCAST"
	sleep 1
}

# ---- OpenSM ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i -e 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg "$SM_HOST" opensm -F "$SIM_TMP/osm/opensm.conf" \
	-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
wait_until 10 test -s "$SIM_TMP/osm/guid2lid" || fail "OpenSM wrote no guid2lid"
LIDS=$(lids "$SIM_TMP/osm/guid2lid")
lid_of() { awk -v g="$(host_guid "$1")" '$1 == g { printf "%d", $2 }' "$SIM_TMP/osm/guid2lid"; }
PR_FROM="$(lid_of H-0) $(lid_of H-2)"
[ "$(wc -w <<<"$PR_FROM")" -eq 2 ] || fail "H-0, H-2 not in OpenSM's guid2lid"
[ "$(wc -w <<<"$LIDS")" -eq 7 ] || fail "OpenSM's guid2lid: $(wc -w <<<"$LIDS") LIDs of 7 ports"
join
ask "$SM_KEY" "$SIM_TMP/opensm.sa"
sim_stop

# ---- ibsmd, with OpenSM's LIDs ----
mkdir -p "$SIM_TMP/state"
{
	echo '# ibsmd GUID -> LID, format 2 (ends with "# end: N entries"); written by ibsmd, read at start-up'
	echo '# GUID LID LAST_SEEN (seconds since the epoch; 0: unknown)'
	awk '/^0x/ { printf "%s %d 0\n", $1, $2 }' "$SIM_TMP/osm/guid2lid" | sort
	echo "# end: $(grep -c '^0x' "$SIM_TMP/osm/guid2lid") entries"
} >"$SIM_TMP/state/guid2lid"
printf 'sm:\n  sm_key: %d\nsa:\n  sa_key: %d\n' "$SM_KEY" "$SM_KEY" >"$SIM_TMP/policy.yaml"
sim_start "$net"
on_host_bg "$SM_HOST" "$IBSMD" -c "$SIM_TMP/policy.yaml" -S "$SIM_TMP/state" \
	-s "$SIM_TMP/ctl.sock" >"$SIM_TMP/ibsmd.log" 2>&1
wait_up 30 "$SIM_TMP/ibsmd.log" ibsmd
join
CTL="$SIM_TMP/ctl.sock"
ask "$SM_KEY" "$SIM_TMP/ibsmd.sa"
sim_stop

# ---- compare ----
python3 "$SIM_ROOT/tests/sim/sa_compare.py" "$SIM_TMP/opensm.sa" "$SIM_TMP/ibsmd.sa" "$TYPES" \
	>"$SIM_TMP/summary" || fail "answers differ from OpenSM's: $(head -n 60 "$SIM_TMP/summary")"
pass "saquery: every type's answers as OpenSM's with the same LIDs ($(cat "$SIM_TMP/summary"); saquery deaths asked again: $(cat "$SIM_TMP/deaths" 2>/dev/null | wc -l))"
