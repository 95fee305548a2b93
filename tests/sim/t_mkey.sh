#!/bin/bash
# M_Key protection under ibsim (ibsmd(8), "M_KEY"), which checks no M_Key
# and stores none of PortInfo's M_Key fields: the policy must still bring
# the subnet up.  libmaddrop counts the SM's SMP requests by their M_Key:
#   protect_level 0: every SMP carries M_Key 0, no secret is made;
#   protect_level 2, first start: the secret is made (mode 0600, 32 hex
#     digits), the subnet comes up with every port answering, SMPs carry
#     keys, and only a device's first query (its NodeInfo, before its GUID
#     is known) goes with key 0;
#   a restart with the same state directory: the neighbour map names every
#     device before it is asked, not one SMP carries key 0; ibsmctl status
#     counts every keyed port, /metrics the same;
#   ibsmd -n refuses a secret file others may read and one that is not 32
#     hex digits (exit 78), and accepts the good one; a start refuses the
#     first too (78, before any MAD).
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$net"
NODES=7	# 3 switches, 4 hosts
policy() {	# policy LEVEL FILE
	printf 'sweep:\n  interval_s: 0\nsecurity:\n  m_key:\n    protect_level: %s\n    lease_s: 30\n' \
		"$1" >"$2"
}
policy 0 "$SIM_TMP/p0.yaml"
policy 2 "$SIM_TMP/p2.yaml"
sim_start "$net"

# once NAME POLICY STATE: ibsmd --once on H-0, its MADs counted in $SIM_TMP/NAME.count
once() {
	MADDROP_COUNT="$SIM_TMP/$1.count" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		ibsmd_once H-0 "$3" -c "$2" || fail "$1: ibsmd --once failed: $(tail -n 5 "$SIM_TMP/once.err")"
	[ "$(summary unresponsive)" = 0 ] || fail "$1: unresponsive=$(summary unresponsive)"
	[ "$(summary switches)" = 3 ] && [ "$(summary cas)" = 4 ] || fail "$1: $(grep '^subnet up' "$SIM_TMP/once.out")"
}
count() { awk -v k="$2" '$1 == k { print $2 }' "$SIM_TMP/$1.count"; }

once off "$SIM_TMP/p0.yaml" "$SIM_TMP/state0"
[ "$(count off smp_mkey_set)" = 0 ] && [ "$(count off smp_mkey_zero)" -gt 0 ] ||
	fail "level 0: SMPs keyed $(count off smp_mkey_set), unkeyed $(count off smp_mkey_zero)"
[ ! -e "$SIM_TMP/state0/mkey.secret" ] || fail "level 0 made a secret"

once first "$SIM_TMP/p2.yaml" "$SIM_TMP/state"
secret="$SIM_TMP/state/mkey.secret"
[ "$(stat -c %a "$secret")" = 600 ] || fail "secret mode $(stat -c %a "$secret")"
grep -qx '[0-9a-f]\{32\}' "$secret" || fail "secret content: $(wc -c <"$secret") bytes"
[ -s "$SIM_TMP/state/neighbors" ] || fail "no neighbour map written"
keyed=$(count first smp_mkey_set) zero=$(count first smp_mkey_zero)
[ "$keyed" -gt 0 ] && [ "$zero" -le "$NODES" ] ||
	fail "first start: SMPs keyed $keyed, unkeyed $zero (at most one a device: $NODES)"

# the restart as a daemon: nothing asked without its key, status and metrics
log="$SIM_TMP/ibsmd.log" ctl="$SIM_TMP/ctl.sock"
MADDROP_COUNT="$SIM_TMP/again.count" MADDROP_EVERY=1 SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
	on_host_bg H-0 "$IBSMD" -c "$SIM_TMP/p2.yaml" -S "$SIM_TMP/state" -s "$ctl" >"$log" 2>&1
wait_up 30 "$log" ibsmd
grep -q 'unresponsive=0' "$log" || fail "restart: $(grep '^subnet up' "$log")"
[ "$(count again smp_mkey_zero)" = 0 ] && [ "$(count again smp_mkey_set)" -gt 0 ] ||
	fail "restart: SMPs unkeyed $(count again smp_mkey_zero), keyed $(count again smp_mkey_set)"
[ "$(status_field "$ctl" m_key.protect_level)" = 2 ] || fail "status m_key: $(status_field "$ctl" m_key)"
[ "$(status_field "$ctl" m_key.ports_keyed)" = "$NODES" ] &&
	[ "$(status_field "$ctl" m_key.ports_unkeyed)" = 0 ] || fail "status m_key: $(status_field "$ctl" m_key)"
m=$(timeout 10 "$IBSMCTL" -s "$ctl" metrics)
grep -q "^ibsmd_mkey_ports{state=\"keyed\"} $NODES\$" <<<"$m" ||
	fail "metrics: $(grep ibsmd_mkey_ports <<<"$m")"
timeout 10 "$IBSMCTL" -s "$ctl" status | grep -q '^M_Key: protect level ' || fail "ibsmctl status: no M_Key line"

# ibsmd -n: the secret checked
check_n() {	# check_n WANT_STATUS: ibsmd -n with the level-2 policy on $SIM_TMP/state
	local rc=0
	"$IBSMD" -n -c "$SIM_TMP/p2.yaml" -S "$SIM_TMP/state" >"$SIM_TMP/n.out" 2>&1 || rc=$?
	[ "$rc" = "$1" ] || fail "ibsmd -n: status $rc, want $1: $(cat "$SIM_TMP/n.out")"
}
check_n 0
cp "$secret" "$SIM_TMP/secret.good"
chmod 644 "$secret"
check_n 78
grep -q 'chmod 600' "$SIM_TMP/n.out" || fail "ibsmd -n, mode 644: $(cat "$SIM_TMP/n.out")"
rc=0
"$IBSMD" --once -c "$SIM_TMP/p2.yaml" -S "$SIM_TMP/state" >"$SIM_TMP/start.out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q 'chmod 600' "$SIM_TMP/start.out" ||
	fail "a start with the secret at mode 644: status $rc: $(cat "$SIM_TMP/start.out")"
printf 'not a secret\n' >"$secret"
chmod 600 "$secret"
check_n 78
grep -q '32 hex digits' "$SIM_TMP/n.out" || fail "ibsmd -n, bad content: $(cat "$SIM_TMP/n.out")"
cp "$SIM_TMP/secret.good" "$secret"
pass "protect_level 0: no key sent; 2: secret made 0600, subnet up, $keyed keyed SMPs and $zero first queries with key 0; restart: none with key 0, $NODES ports keyed in status and metrics; -n refuses mode 644 and bad content, a start mode 644 (78)"
sim_stop
