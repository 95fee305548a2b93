#!/bin/bash
# Losses: with ibsim `Error "switch" 10` (10% of the packets arriving at every
# switch port dropped and bounced), and separately with 10% of ibsmd's
# requests silently dropped by tests/shims/maddrop.c, `ibsmd --once` with an
# empty state directory succeeds and gives the same LIDs as a loss-free run.
. "$(dirname "$0")/common.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 12 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$net"

run() {	# NAME [errors] [SHIM]: one bring-up on a fresh ibsim; LIDs in $SIM_TMP/NAME.lids
	local name=$1
	sim_start "$net"
	if [ "${2:-}" = errors ]; then
		for sw in $(grep -o '^Switch[^"]*"[^"]*"' "$net" | grep -o '"[^"]*"'); do
			sim_cmd "Error $sw 10" >/dev/null
		done
	fi
	SIM_EXTRA_PRELOAD=${3:-} ibsmd_once H-0 "$SIM_TMP/state-$name" || {
		tail -n 5 "$SIM_TMP/once.err" >&2
		fail "$name: ibsmd --once exited non-zero"
	}
	cp "$SIM_TMP/once.out" "$SIM_TMP/$name.out"
	cp "$SIM_TMP/once.err" "$SIM_TMP/$name.err"
	[ "$(summary unresponsive)" = 0 ] || fail "$name: unresponsive=$(summary unresponsive)"
	# the diags must see the fabric without the losses
	[ "${2:-}" = errors ] && for sw in $(grep -o '^Switch[^"]*"[^"]*"' "$net" | grep -o '"[^"]*"'); do
		sim_cmd "Error $sw 0" >/dev/null
	done
	check_up "$SIM_TMP/$name"
	python3 "$SIM_LIDS" "$SIM_TMP/$name.topo" >"$SIM_TMP/$name.lids"
	sim_stop
}

run clean
run errors errors
cmp -s "$SIM_TMP/clean.lids" "$SIM_TMP/errors.lids" || fail "LIDs differ with ibsim errors"
errs=$(grep -o 'mad_errors=[0-9]*' "$SIM_TMP/errors.out" | tail -n 1)
[ "${errs#mad_errors=}" -gt 0 ] || fail "ibsim errors: no MAD error counted ($errs)"
pass "ibsim Error 10% on every switch port: same $(wc -l <"$SIM_TMP/clean.lids") LIDs, all routed; $errs $(grep -o 'mad_retries=[0-9]*' "$SIM_TMP/errors.out" | tail -n 1)"

export MADDROP_RATE=10 MADDROP_SEED=11 MADDROP_COUNT="$SIM_TMP/maddrop.count"
run silent "" "$SIM_MADDROP"	# only ibsmd is preloaded with the shim
unset MADDROP_RATE MADDROP_SEED MADDROP_COUNT
cmp -s "$SIM_TMP/clean.lids" "$SIM_TMP/silent.lids" || fail "LIDs differ with silent loss"
to=$(grep -o 'mad_timeouts=[0-9]*' "$SIM_TMP/silent.out" | tail -n 1)
re=$(grep -o 'mad_retries=[0-9]*' "$SIM_TMP/silent.out" | tail -n 1)
[ "${to#mad_timeouts=}" -gt 0 ] && [ "${re#mad_retries=}" -gt 0 ] ||
	fail "silent loss: expected timeouts and retries, got $to $re"
dropped=$(awk '$1 == "dropped" { print $2 }' "$SIM_TMP/maddrop.count")
[ "${dropped:-0}" -gt 0 ] || fail "the shim dropped nothing"
pass "10% silent loss ($dropped MADs dropped by the shim): same LIDs, all routed; $to $re"
