#!/bin/bash
# The SA's trusted requests (ibsmd(8), "Trusted requests"), judged with
# saquery --smkey: ibsmd on H-3 of a small tree with sm.sm_key SM_KEY and
# sa.sa_key SA_KEY; from H-0, P_KeyTableRecords of H-0's LID:
#   --smkey SA_KEY: answered (trusted), H-0's table holds the default P_Key;
#   no key (0): refused, ERR_REQ_INVALID (C15-0.1.18);
#   --smkey SM_KEY (the SM's key is not the SA's) and --smkey BAD_KEY: not
#     answered at all (C15-0.1.5), saquery times out;
# and a NodeRecord without a key is answered as before.  ibsmctl's
# sa.untrusted is 1 and sa.dropped.sm_key 2, /metrics the same, and the
# log names both kinds of refusal.
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

SM_KEY=0x5111 SA_KEY=0x5a5a BAD_KEY=0xbad
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$net"
printf 'sm:\n  sm_key: %s\nsa:\n  sa_key: %s\nsweep:\n  interval_s: 0\n' \
	"$SM_KEY" "$SA_KEY" >"$SIM_TMP/policy.yaml"
log="$SIM_TMP/ibsmd.log" ctl="$SIM_TMP/ctl.sock"
sim_start "$net"
on_host_bg H-3 "$IBSMD" -c "$SIM_TMP/policy.yaml" -S "$SIM_TMP/state" -s "$ctl" >"$log" 2>&1
wait_up 30 "$log" ibsmd

lid=$(on_host H-0 ibstat 2>/dev/null | sed -n 's/^\s*Base lid: \([0-9]*\)$/\1/p' | head -n 1)
[ -n "$lid" ] && [ "$lid" != 0 ] || fail "no LID for H-0: $(on_host H-0 ibstat 2>&1 | head -n 20)"

# pktr KEY: saquery's PKTR of H-0 with SM_Key KEY (none: no --smkey), output and status
pktr() {
	on_host H-0 saquery -t 300 ${1:+--smkey "$1"} PKTR "$lid" 2>&1
}

out=$(pktr "$SA_KEY") || fail "trusted PKTR failed: $out"
grep -q 'PKeyTableRecord dump' <<<"$out" && grep -qi '0xffff' <<<"$out" ||
	fail "trusted PKTR: no table with 0xffff: $out"
out=$(pktr "") && fail "untrusted PKTR answered: $out"
grep -q 'ERR_REQ_INVALID' <<<"$out" || fail "untrusted PKTR: not ERR_REQ_INVALID: $out"
for k in "$SM_KEY" "$BAD_KEY"; do
	out=$(pktr "$k") && fail "PKTR with SM_Key $k answered: $out"
	grep -qi 'timed out\|timeout\|ETIMEDOUT' <<<"$out" || fail "PKTR with SM_Key $k: not a timeout: $out"
done
out=$(on_host H-0 saquery -t 300 NR "$lid" 2>&1) && grep -q 'NodeRecord dump' <<<"$out" ||
	fail "untrusted NodeRecord not answered: $out"

[ "$(status_field "$ctl" sa.untrusted)" = 1 ] || fail "sa.untrusted: $(status_field "$ctl" sa.untrusted)"
[ "$(status_field "$ctl" sa.dropped.sm_key)" = 2 ] ||
	fail "sa.dropped.sm_key: $(status_field "$ctl" sa.dropped.sm_key)"
m=$(timeout 10 "$IBSMCTL" -s "$ctl" metrics)
grep -q '^ibsmd_sa_untrusted_total 1$' <<<"$m" && grep -q '^ibsmd_sa_bad_key_total 2$' <<<"$m" ||
	fail "metrics: $(grep -E 'ibsmd_sa_(untrusted|bad_key)_total ' <<<"$m")"
grep -q 'without the SA key (sa.sa_key) a trusted requester holds; ERR_REQ_INVALID' "$log" ||
	fail "no log line for the untrusted request"
grep -q 'neither 0 nor sa.sa_key; ignored' "$log" || fail "no log line for the bad keys"
pass "saquery PKTR: --smkey sa.sa_key answered, no key ERR_REQ_INVALID, sm.sm_key and a bad key unanswered; sa.untrusted 1, sa.dropped.sm_key 2, metrics and log"
sim_stop
