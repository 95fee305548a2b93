#!/bin/bash
# The SM's PerfMgt codec (mad/pma.c, through build/pmaquery) against
# ibsim's PMA and perfquery: every counter set from ibsim's console on a
# switch port and a CA port (PerformanceSet) reads the same through
# ClassPortInfo, PortCounters and PortCountersExtended as perfquery and
# perfquery -x show; the clearing Set zeroes every PortCounters counter
# (perfquery agrees) and leaves ibsim's separate 64-bit ones alone.
. "$(dirname "$0")/common.sh"
PMAQUERY="$SIM_ROOT/build/pmaquery"
[ -x "$PMAQUERY" ] || fail "build/pmaquery is missing: run make"
gen ftree2 --radix 4 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$SIM_TMP/f.net"
sim_start "$SIM_TMP/f.net"
ibsmd_once H-0 "$SIM_TMP/state" || fail "bring-up: $(tail -n 2 "$SIM_TMP/once.err")"
on_host H-1 ibnetdiscover >"$SIM_TMP/topo" 2>/dev/null || fail "ibnetdiscover"
python3 "$SIM_LIDS" "$SIM_TMP/topo" >"$SIM_TMP/lids" || fail "lids_of.py"
lid_of() { awk -v g="$1" '$1 == g { print $2 }' "$SIM_TMP/lids"; }
# L0-S0's port 3 (its uplink: no MAD of this test crosses it) and H-0's port
SW_LID=$(lid_of 0x0002c90100000000)
CA_LID=$(lid_of 0x0002c90200000001)
[ -n "$SW_LID" ] && [ -n "$CA_LID" ] || fail "no LIDs: $(cat "$SIM_TMP/lids")"

# perf NODE PORT FIELD=VALUE...: PerformanceSet each on ibsim's console
perf() {
	local node=$1 port=$2 kv out
	shift 2
	for kv in "$@"; do
		out=$(sim_cmd "PerformanceSet \"$node\"[$port] $kv")
		grep -q 'has been set' <<<"$out" || fail "PerformanceSet $node[$port] $kv: $out"
	done
}
# Distinct values, every byte of a field in use (a wrong offset, width or
# byte order shows); the 4-bit pair differs.
perf L0-S0 3 PortCounters.SymbolErrorCounter=4660 PortCounters.LinkErrorRecoveryCounter=86 \
	PortCounters.LinkDownedCounter=120 PortCounters.PortRcvErrors=39612 \
	PortCounters.PortRcvRemotePhysicalErrors=57072 PortCounters.PortRcvSwitchRelayErrors=4951 \
	PortCounters.PortXmitDiscards=9320 PortCounters.PortXmitConstraintErrors=154 \
	PortCounters.PortRcvConstraintErrors=188 PortCounters.LocalLinkIntegrityErrors=9 \
	PortCounters.ExcessiveBufferOverrunErrors=6 PortCounters.VL15Dropped=13689 \
	PortCounters.PortXmitWait=305419896 PortCounters.PortXmitData=2596069104 \
	PortCounters.PortRcvData=267242409 PortCounters.PortXmitPkts=287454020 \
	PortCounters.PortRcvPkts=1432778632 \
	PortCountersExtended.PortXmitData=81985529216486895 \
	PortCountersExtended.PortRcvData=1234605616436508552 \
	PortCountersExtended.PortXmitPkts=723685415333071889 \
	PortCountersExtended.PortRcvPkts=8603657889541918976
# H-0's port carries this test's MADs: its data counters saturated, so
# that they hold still (PortCounters stops at 2^32-1, the extended at 2^64-1)
perf H-0 1 PortCounters.SymbolErrorCounter=513 PortCounters.LinkDownedCounter=7 \
	PortCounters.PortRcvErrors=771 PortCounters.LocalLinkIntegrityErrors=3 \
	PortCounters.ExcessiveBufferOverrunErrors=12 PortCounters.PortXmitWait=65537 \
	PortCounters.PortXmitData=4294967295 PortCounters.PortRcvData=4294967295 \
	PortCounters.PortXmitPkts=4294967295 PortCounters.PortRcvPkts=4294967295 \
	PortCountersExtended.PortXmitData=18446744073709551615 \
	PortCountersExtended.PortRcvData=18446744073709551615 \
	PortCountersExtended.PortXmitPkts=18446744073709551615 \
	PortCountersExtended.PortRcvPkts=18446744073709551615

# pmaq LID PORT [clear]: pmaquery's lines; field TAG: its NAME=VALUE lines of
# TAG.  (fail in a $(...) ends only that subshell: callers add || exit 1.)
pmaq() { on_host H-1 "$PMAQUERY" "$@" 2>&1 || fail "pmaquery $*: $(on_host H-1 "$PMAQUERY" "$@" 2>&1 | tail -n 1)"; }
field() { sed -n "s/^$1 //p" | tr ' ' '\n'; }
# perfq ARGS: perfquery's counters as NAME=VALUE lines
perfq() { on_host H-1 perfquery "$@" 2>/dev/null | sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9x]*\)$/\1=\2/p'; }
# same WHAT OURS THEIRS: every NAME=VALUE of ours is in theirs
same() {
	local kv n=0
	while read -r kv; do
		[ -n "$kv" ] || continue
		grep -qx -- "$kv" <<<"$3" || fail "$1: pmaquery $kv, perfquery $(grep "^${kv%%=*}=" <<<"$3")"
		n=$((n + 1))
	done <<<"$2"
	[ "$n" -gt 0 ] || fail "$1: pmaquery printed nothing"
	echo "$n"
}

for at in "$SW_LID 3 0x1300 switch" "$CA_LID 1 0x1200 CA"; do
	read -r lid port cap what <<<"$at"
	out=$(pmaq "$lid" "$port") || exit 1
	grep -q "^cpi capmask=$cap " <<<"$out" || fail "$what: ClassPortInfo: $(grep ^cpi <<<"$out")"
	grep -q "(CapMask: $cap)" <(on_host H-1 perfquery "$lid" "$port" 2>/dev/null) ||
		fail "$what: perfquery does not show CapMask $cap"
	n_pc=$(same "$what PortCounters" "$(field pc <<<"$out")" "$(perfq "$lid" "$port")") || exit 1
	n_ext=$(same "$what PortCountersExtended" "$(field ext <<<"$out")" "$(perfq -x "$lid" "$port")") || exit 1
	pass "$what LID $lid port $port: CapabilityMask $cap, $n_pc PortCounters and $n_ext extended counters as perfquery shows them"
done
pmaq "$SW_LID" 3 | grep -q 'pc SymbolErrorCounter=4660 .* PortXmitData=2596069104 ' ||
	fail "the planted values did not come back: $(pmaq "$SW_LID" 3 | grep ^pc)"

# the clear: its answer and perfquery all zeros; the extended ones stay
out=$(pmaq "$SW_LID" 3 clear) || exit 1
nonzero=$(field clear <<<"$out" | grep -v '=0$' | tr '\n' ' ')
[ -z "$nonzero" ] || fail "the clearing Set's answer: $nonzero"
nonzero=$(perfq "$SW_LID" 3 | grep -v '^Port\(Select\)\?=\|^CounterSelect2\?=' | grep -v '=0$' | tr '\n' ' ')
[ -z "$nonzero" ] || fail "perfquery after the clear: $nonzero"
grep -q '^ext PortXmitData=81985529216486895 ' <<<"$out" ||
	fail "ibsim's 64-bit PortXmitData changed by the clear: $(grep ^ext <<<"$out")"
pass "the clearing Set: every PortCounters counter 0 (perfquery agrees), PortCountersExtended untouched (ibsim keeps them apart)"
