# tests/sim/mcast_lib.sh: what the multicast tests share (t_mcast.sh,
# t_mcast_opensm.sh); sources common.sh.  Judged from infiniband-diags
# output and mcjoin's answers only (tests/sim/mcast_check.py), never from
# the SM's own view.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MCJOIN="$SIM_ROOT/build/mcjoin"
# shellcheck disable=SC2034 # t_mcast_opensm.sh's
LFTSET="$SIM_ROOT/build/lftset"
MCAST_CHECK="$SIM_ROOT/tests/sim/mcast_check.py"
BCAST=ff12:401b:ffff::ffff:ffff		# the default partition's IPoIB broadcast group
[ -x "$MCJOIN" ] || fail "build/mcjoin is missing: run make"
command -v saquery >/dev/null && command -v ibroute >/dev/null ||
	fail "infiniband-diags is not installed (make deps)"

# gid_of H-N: the port GID of host N's port 1, as saquery writes it
gid_of() { python3 "$SIM_ROOT/tests/sim/vm_check.py" gid "$(host_guid "$1")"; }

# json_field KEY LINE: a string or number field of mcjoin's JSON line
json_field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2"; }

# mc_do join|leave HOST ARGS...: mcjoin from HOST; fails the test unless
# the SA said ok; the answer in $MC_OUT, its MGID and MLID in $MC_MGID and
# $MC_MLID (mcjoin.log keeps every answer)
mc_do() {
	local op=$1 host=$2
	shift 2
	MC_OUT=$(on_host "$host" "$MCJOIN" "$op" "$@" 2>&1) ||
		fail "$host: mcjoin $op $*: ${MC_OUT:-no output}"
	echo "$MC_OUT" >>"$SIM_TMP/mcjoin.log"
	MC_MGID=$(json_field mgid "$MC_OUT")
	MC_MLID=$(json_field mlid "$MC_OUT")
}
mc_join() { mc_do join "$@"; }
mc_leave() { mc_do leave "$@"; }

# member_of MGID HOST: the SA has HOST's port as a member of MGID, one
# record asked by MGID and PortGID (ibsim cuts a GetTable to one MAD)
member_of() {
	on_host H-0 saquery MCMR --mgid "$1" --gid "$(gid_of "$2")" 2>/dev/null |
		grep -q 'MCMember Record dump'
}

# members_found MGID HOST...: every HOST is a member; fails the test otherwise
members_found() {
	local mgid=$1 h
	shift
	for h in "$@"; do
		member_of "$mgid" "$h" || fail "saquery MCMR --mgid $mgid --gid $(gid_of "$h"): $h is not a member"
	done
}

# bcast_group: "MGID MTU RATE PKEY" of the broadcast group in saquery -g
# from H-0 (the raw MTU and rate bytes: selector and value)
bcast_group() {
	on_host H-0 saquery -g 2>&1 | awk -v m="$BCAST" '
		/MGID\.\.\./ { g = $0; sub(/.*\.\./, "", g); on = (g == m) }
		on && /Mtu\.\.\./ { t = $0; sub(/.*\.\./, "", t) }
		on && /Rate\.\.\./ { r = $0; sub(/.*\.\./, "", r) }
		on && /pkey\.\.\./ { p = $0; sub(/.*\.\./, "", p) }
		END { if (p != "") print m, t, r, p }'
}

# group_qkey MGID: the Q_Key of MGID's member records (saquery MCMR --mgid)
group_qkey() {
	on_host H-0 saquery MCMR --mgid "$1" 2>/dev/null |
		sed -n 's/^\s*qkey\.*\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1
}

# mft_dump PREFIX: PREFIX.topo (ibnetdiscover) and PREFIX.mft (ibroute -M
# of every switch in it)
mft_dump() {
	local p=$1 lid
	on_host H-0 ibnetdiscover >"$p.topo" 2>"$p.err" || fail "ibnetdiscover: $(tail -n 2 "$p.err")"
	: >"$p.mft"
	for lid in $(sed -n 's/^Switch\s.*\bbase port 0 lid \([0-9]*\) .*/\1/p' "$p.topo"); do
		on_host H-0 ibroute -M "$lid" >>"$p.mft" 2>>"$p.err" ||
			fail "ibroute -M $lid: $(tail -n 2 "$p.err")"
	done
}

# mcast_ok PREFIX GROUP...: dump and judge; GROUP is MLID=HOST,HOST... or
# an option of mcast_check.py check (--send-only=MLID=HOST,...)
mcast_ok() {
	local p=$1 g args=()
	shift
	for g in "$@"; do
		case $g in
		--*) args+=("$g") ;;
		*) args+=(--group "$g") ;;
		esac
	done
	mft_dump "$p"
	python3 "$MCAST_CHECK" check --topo "$p.topo" --mft "$p.mft" "${args[@]}" >"$p.check" 2>&1
}

# trees_ok PREFIX SECONDS GROUP...: mcast_ok until it passes (the SM writes
# the MFTs after it answered the joins); fails the test with the report
trees_ok() {
	local p=$1 limit=$2 start=$SECONDS
	shift 2
	until mcast_ok "$p" "$@"; do
		[ $((SECONDS - start)) -ge "$limit" ] && {
			grep FAIL "$p.check" | head -n 8 >&2
			fail "mcast_check.py: the trees are wrong after ${limit}s ($p.check)"
		}
		sleep 0.3
	done
}
