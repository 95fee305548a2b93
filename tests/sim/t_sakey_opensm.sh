#!/bin/bash
# The SA key (ibsmd(8), "Trusted requests") against OpenSM's sa_key: the
# same SA requests, each with key 0, a wrong key and the SA key, from H-0
# to ibsmd (sa.sa_key) and to OpenSM (sa_key) on fresh ibsims of the same
# fabric (a two-level tree, the SM on H-3).  The records where the key
# matters: OpenSM's osm_sa_mad_ctrl.c drops a key that is neither 0 nor
# sa_key; osm_sa_pkey_record.c refuses an untrusted P_KeyTableRecord
# query, osm_sa_informinfo.c an untrusted subscription to traps 256-259
# and hides an untrusted InformInfoRecord's QPN, osm_sa_service_record.c
# the ServiceKey, osm_sa_mcmember_record.c a member's PortGID, JoinState
# and ProxyJoin.  And where it must change nothing but the drop:
# NodeRecord, PortInfoRecord, SMInfoRecord, a subscription to trap 128.
# Each answer becomes a verdict: "no-answer" (dropped), the SA status, or
# "ok" with what it shows of the hidden fields (saquery where it shows
# them, build/madsend's `sa` where it does not: QPN, ServiceKey, M_Key,
# SM_Key, and the Sets).
#
# Every verdict must equal OpenSM's but those of DIFFER, where ibsmd
# deliberately differs: they must be exactly the documented pair, and are
# printed:
#   SR.set.other zero  an untrusted host registers a ServiceRecord for
#       another port's GID: OpenSM accepts, ibsmd refuses ERR_REQ_INVALID
#       (ibsmd(8), "Service records"; sa.services.refused_owner).
# PortInfoRecord's M_Key, which ibsmd hides from trusted requests too, is
# 0 in every PortInfo ibsim answers (DEVELOPERS.md): the SMs cannot differ
# there under ibsim.  SMInfoRecord's SM_Key is 0 to everyone in both SMs'
# answers (both hold an SM_Key here).  Every wrong key must go unanswered
# and every right one answered, by both; ibsmd's sa.dropped.sm_key counts
# the wrong keys.
. "$(dirname "$0")/mcast_lib.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
MADSEND="$SIM_ROOT/build/madsend"
[ -x "$MADSEND" ] || fail "build/madsend is missing: run make"

SA_KEY=0x5a5a BAD_KEY=0xbad SM_KEY=0x5111
KEYS="0 $BAD_KEY $SA_KEY"	# the right key last: its Sets are the ones kept
declare -A DIFFER=(["SR.set.other zero"]="ok key=hidden|status=0x0200")

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$net"

# key_name KEY: right, zero or wrong
key_name() { case $1 in "$SA_KEY") echo right ;; 0) echo zero ;; *) echo wrong ;; esac; }
zero() { [[ $1 =~ ^0*$ ]]; }

# sa KEY METHOD ATTR MASK [HEX]: madsend's answer from H-0 to the SM;
# SA_ST (the status, or "none") and SA_RECS (the records, one a line)
sa() {
	local out
	out=$(on_host H-0 "$MADSEND" sa "$SMLID" "$@" 2>&1)
	SA_ST=$(sed -n 's/^status=\(0x[0-9a-f]*\) .*/\1/p' <<<"$out")
	SA_RECS=$(sed -n 's/^record=//p' <<<"$out")
	if [ -z "$SA_ST" ]; then
		grep -qx 'no answer' <<<"$out" || fail "madsend sa $*: $out"
		SA_ST=none
	fi
}
# sa_verdict FIELD_FN: no-answer, status=0xSSSS, or "ok" and FIELD_FN's
# words for the records (sorted: the SMs may list them in another order)
sa_verdict() {
	case $SA_ST in
	none) echo no-answer ;;
	0x0000) echo "ok $(while read -r r; do [ -n "$r" ] && "$1" "$r"; done <<<"$SA_RECS" | sort | tr '\n' ' ' | sed 's/ $//')" ;;
	*) echo "status=$SA_ST" ;;
	esac
}
# the fields a record hides from untrusted requests, as shown or hidden
# InformInfoRecord: the InformInfo at byte 24, its QPN at its byte 28
iir_fields() { zero "${1:104:6}" && echo qpn=hidden || echo qpn=shown; }
# ServiceRecord: ServiceKey, bytes 32-47
sr_fields() { zero "${1:64:32}" && echo key=hidden || echo key=shown; }
# PortInfoRecord: the PortInfo at byte 4, its M_Key first
pir_fields() { zero "${1:8:16}" && echo mkey=0 || echo mkey=set; }
# SMInfoRecord: the SMInfo at byte 4, its SM_Key after the GUID
smir_fields() { zero "${1:24:16}" && echo smkey=0 || echo smkey=set; }
# InformInfo (a Set's answer): nothing hidden
ii_fields() { :; }

# saquery_verdict OUT STATUS: no-answer, the SA error, or "ok"
saquery_verdict() {
	if grep -qi 'timed out' <<<"$1"; then
		echo no-answer
	elif grep -q 'SA_ERR_[A-Z_]*\|returned 0x' <<<"$1"; then
		echo "status=$(grep -o 'returned 0x[0-9a-f]*' <<<"$1" | cut -d' ' -f2)"
	elif [ "$2" != 0 ]; then
		echo "failed($2)"
	else
		echo ok
	fi
}
sq() { on_host H-0 saquery -t 300 --smkey "$@" 2>&1; }

# a subscription (InformInfo, IBA 13.4.8.3) from H-0 to trap TRAP:
# GID 0, LIDRangeBegin 0xffff, IsGeneric, Subscribe, Type all, QPN 1,
# RespTimeValue 18, ProducerType all
inform_hex() { printf '%032x%s%04x%s' 0 ffff000000000101ffff "$1" 0000011200ffffff; }
# a ServiceRecord (IBA 15.2.5.14) of ServiceID SID for port GUID G:
# ServiceP_Key 0xffff, lease infinite, ServiceKey all 0x11, name "sakey"
sr_hex() {
	printf '%016xfe80000000000000%016xffff0000ffffffff%s%s%0128x' "$1" "$2" \
		"$(printf '11%.0s' $(seq 16))" "$(printf 'sakey' | xxd -p)$(printf '%0118x' 0)" 0
}
SR_MASK=0x77	# ServiceID, GID, P_Key, lease, key, name
OWN_SID=0x1000000000005a01 OTHER_SID=0x1000000000005a02

# ask SM OUT: every question, "ROW KEY VERDICT" a line into OUT
ask() {
	local out=$2 k r lid
	lid=$(on_host H-0 ibstat 2>/dev/null | sed -n 's/^\s*Base lid: \([0-9]*\)$/\1/p' | head -n 1)
	SMLID=$(on_host H-0 ibstat 2>/dev/null | sed -n 's/^\s*SM lid: \([0-9]*\)$/\1/p' | head -n 1)
	[ -n "$lid" ] && [ "$lid" != 0 ] && [ -n "$SMLID" ] || fail "$1: H-0 has no LID or SM LID"
	mc_do join H-0 --mgid "$BCAST"
	mc_do join H-1 --mgid "$BCAST"
	: >"$out"
	for k in $KEYS; do
		row() { printf '%s %s %s\n' "$1" "$(key_name "$k")" "$2" >>"$out"; }
		r=$(sq "$k" PKTR "$lid"); row PKTR.get "$(saquery_verdict "$r" $?)"
		r=$(sq "$k" NR "$lid"); row NR.get "$(saquery_verdict "$r" $?)"
		sa "$k" 0x12 0x0012 0x1 "$(printf '%04x' "$lid")"; row PIR.gettable "$(sa_verdict pir_fields)"
		sa "$k" 0x12 0x0018 0; row SMIR.gettable "$(sa_verdict smir_fields)"
		r=$(sq "$k" MCMR)
		row MCMR.gettable "$(saquery_verdict "$r" $?)$(grep -q 'MCMember Record dump' <<<"$r" &&
			printf ' records=%s portgid=%s join=%s' "$(grep -c 'MCMember Record dump' <<<"$r")" \
			"$(sed -n 's/^\s*PortGid\.*\(.*\)$/\1/p' <<<"$r" | sort | paste -sd,)" \
			"$(sed -n 's/^\s*JoinState\.*\(.*\)$/\1/p' <<<"$r" | sort | paste -sd,)")"
		sa "$k" 0x02 0x0003 0 "$(inform_hex 256)"; row II.set.trap256 "$(sa_verdict ii_fields)"
		sa "$k" 0x02 0x0003 0 "$(inform_hex 128)"; row II.set.trap128 "$(sa_verdict ii_fields)"
		sa "$k" 0x12 0x00f3 0; row IIR.gettable "$(sa_verdict iir_fields)"
		sa "$k" 0x02 0x0031 "$SR_MASK" "$(sr_hex "$OWN_SID" "$(host_guid H-0)")"
		row SR.set.own "$(sa_verdict sr_fields)"
		sa "$k" 0x02 0x0031 "$SR_MASK" "$(sr_hex "$OTHER_SID" "$(host_guid H-1)")"
		row SR.set.other "$(sa_verdict sr_fields)"
		# by ServiceID: one record, that H-0 registered
		sa "$k" 0x12 0x0031 0x1 "$(printf '%016x' "$OWN_SID")"; row SR.gettable "$(sa_verdict sr_fields)"
	done
}

# ---- OpenSM ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
printf 'sa_key %s\nsm_key %s\nforce_log_flush TRUE\n' "$SA_KEY" "$SM_KEY" >"$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-3 opensm -F "$SIM_TMP/osm/opensm.conf" -f "$SIM_TMP/osm/opensm.log" \
	>"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
ask opensm "$SIM_TMP/opensm.v"
sim_stop

# ---- ibsmd ----
printf 'sa:\n  sa_key: %s\nsm:\n  sm_key: %s\nsweep:\n  interval_s: 0\n' "$SA_KEY" "$SM_KEY" \
	>"$SIM_TMP/policy.yaml"
ctl="$SIM_TMP/ctl.sock"
sim_start "$net"
on_host_bg H-3 "$IBSMD" -c "$SIM_TMP/policy.yaml" -S "$SIM_TMP/state" -s "$ctl" \
	>"$SIM_TMP/ibsmd.log" 2>&1
wait_up 30 "$SIM_TMP/ibsmd.log" ibsmd
ask ibsmd "$SIM_TMP/ibsmd.v"
dropped=$(status_field "$ctl" sa.dropped.sm_key)
sim_stop

# ---- the verdicts ----
printf '%-16s %-6s %-40s %s\n' ROW KEY OpenSM ibsmd
bad="" same=0 differ=0
while read -r row key osm && read -r row2 key2 ibs <&3; do
	[ "$row $key" = "$row2 $key2" ] || fail "verdict files out of step: $row $key / $row2 $key2"
	printf '%-16s %-6s %-40s %s\n' "$row" "$key" "$osm" "$ibs"
	want=${DIFFER["$row $key"]:-}
	if [ -n "$want" ]; then
		[ "$osm|$ibs" = "$want" ] || bad+=" $row/$key (documented: OpenSM ${want%|*}, ibsmd ${want#*|})"
		differ=$((differ + 1))
		continue
	fi
	[ "$osm" = "$ibs" ] || bad+=" $row/$key"
	case $key in
	wrong) [ "$osm" = no-answer ] || bad+=" $row/$key(answered)" ;;
	right) [ "${osm%% *}" = ok ] || bad+=" $row/$key(not answered)" ;;
	esac
	same=$((same + 1))
done <"$SIM_TMP/opensm.v" 3<"$SIM_TMP/ibsmd.v"
[ -z "$bad" ] || fail "verdicts not as OpenSM's:$bad"
wrong=$(grep -c ' wrong ' "$SIM_TMP/ibsmd.v")
[ "$dropped" = "$wrong" ] || fail "ibsmd's sa.dropped.sm_key is $dropped, $wrong requests had a wrong key"
for d in "${!DIFFER[@]}"; do
	note "deliberately unlike OpenSM: $d: OpenSM ${DIFFER[$d]%|*}, ibsmd ${DIFFER[$d]#*|} (ibsmd(8), \"Service records\")"
done
pass "SA key: $same verdicts (right key, 0, wrong key) as OpenSM's, $differ deliberately not (printed); $wrong wrong keys ignored by both, sa.dropped.sm_key $dropped"
