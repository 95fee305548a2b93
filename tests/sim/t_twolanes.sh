#!/bin/bash
# congestion.mode dftree's two lanes under ibsim (fast_sl 2, slow_sl 3,
# so that neither is ibsim's starting SL i -> VL i), judged with
# infiniband-diags: `smpquery sl2vl` on every output of a leaf switch
# (all its inputs) and on a CA port maps SL 3 to VL 3 and every other SL
# to VL 2; `smpquery vlarb` on a CA port and a switch port weighs VLs 0-3
# equally (the data VLs up to the slow lane); `smpquery portinfo` shows
# OperVLs VL0-7 (ibsim's VLCap) on both; `saquery -p` between two hosts
# answers SL 2 (no hot-spot); a second heavy sweep writes no SL2VL
# (0x0017) or VLArb (0x0018) table (libmaddrop's counts); `ibsmctl verify`
# reads every table back and finds none wrong.
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
QOSCHECK="$SIM_ROOT/tests/sim/qos_check.py"
NET="$SIM_TMP/ft.net" DIR="$SIM_TMP/lanes"
mkdir -p "$DIR"
gen ftree2 --radix 8 --leaves 3 --spines 2 --hosts-per-leaf 2 -o "$NET"
printf 'congestion: {mode: dftree, fast_sl: 2, slow_sl: 3}\n' >"$DIR/p.yaml"
WANT="2 2 2 3 2 2 2 2 2 2 2 2 2 2 2 2"

ctl() { "$IBSMCTL" -s "$DIR/sock" "$@"; }
ups() { grep -c '^subnet up' "$DIR/out"; }
ups_over() { [ "$(ups)" -gt "$1" ] || ! kill -0 "$SM_PID" 2>/dev/null; }
sets() { mad_sets "$DIR" "$1"; }
stable() { mad_stable "$DIR"; }
# rows FILE: each SL2VL table of smpquery's output, one line of 16 VLs
rows() { sed -n 's/^ports: in *[0-9]*, out *[0-9]*: *|//p' "$1" | tr '|' ' ' | sed 's/  */ /g; s/^ //; s/ $//'; }

sim_start "$NET"
export MADDROP_COUNT="$DIR/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -c "$DIR/p.yaml" \
	-S "$DIR/state" -s "$DIR/sock" >"$DIR/out" 2>"$DIR/err"
unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
SM_PID=$SIM_LAST_PID
wait_until 60 ups_over 0 && kill -0 "$SM_PID" 2>/dev/null || fail "ibsmd did not come up: $(tail -n 3 "$DIR/err")"
stable
check_up "$DIR/0"
SL2VL_SETS=$(sets 0017) VLARB_SETS=$(sets 0018)
[ "$SL2VL_SETS" -gt 0 ] && [ "$VLARB_SETS" -gt 0 ] || fail "bring-up: $SL2VL_SETS SL2VL and $VLARB_SETS VLArb Sets"

# a leaf (the switch H-1 hangs on) and H-1's CA port
lid_of() { on_host "$1" smpquery -D portinfo 0 | sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p'; }
h1=$(lid_of H-1) h2=$(lid_of H-2)
[ -n "$h1" ] && [ -n "$h2" ] || fail "no LID for H-1 ('$h1') or H-2 ('$h2')"
on_host H-1 smpquery sl2vl "$h1" >"$DIR/sl2vl.ca" 2>&1 || fail "smpquery sl2vl $h1: $(cat "$DIR/sl2vl.ca")"
[ "$(rows "$DIR/sl2vl.ca")" = "$WANT" ] || fail "H-1's SL2VL: '$(rows "$DIR/sl2vl.ca")', want '$WANT'"
leaf=$(on_host H-1 smpquery -D portinfo 0,1 0 | sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p')
[ -n "$leaf" ] || fail "no LID for H-1's leaf switch"
# the leaf's linked ports (ibnetdiscover): ibsmd writes the pairs of port 0
# and those, input != output; the others keep what ibsim started with
linked=" 0 $(awk -v l=" lid $leaf lmc " '/^Switch/ { on = index($0, l) > 0; next }
	/^$/ { on = 0 } on && /^\[/ { sub(/^\[/, ""); sub(/\].*/, ""); print }' "$DIR/0.topo" | xargs) "
n=0
for out in $linked; do
	[ "$out" = 0 ] && continue
	on_host H-1 smpquery sl2vl "$leaf" "$out" >"$DIR/sl2vl.sw.$out" 2>&1 ||
		fail "smpquery sl2vl $leaf $out: $(cat "$DIR/sl2vl.sw.$out")"
	while read -r in r; do
		[ "$in" != "$out" ] && [[ $linked == *" $in "* ]] || continue
		n=$((n + 1))
		[ "$r" = "$WANT" ] || fail "leaf LID $leaf (in $in, out $out): '$r', want '$WANT'"
	done < <(sed -n 's/^ports: in *\([0-9]*\), out *[0-9]*: *|/\1|/p' "$DIR/sl2vl.sw.$out" |
		tr '|' ' ' | sed 's/  */ /g; s/ $//')
done
[ "$n" -gt 0 ] || fail "no SL2VL table read from the leaf"
[ "$n" -ge 12 ] || fail "only $n SL2VL tables of the leaf's linked ports judged (linked:$linked)"
pass "SL2VL: SL 3 on VL 3, the others on VL 2, on H-1's port and the $n (in, out) tables of its leaf's linked ports"

on_host H-1 smpquery vlarb "$h1" >"$DIR/vlarb.ca" 2>&1 || fail "smpquery vlarb $h1: $(cat "$DIR/vlarb.ca")"
on_host H-1 smpquery vlarb "$leaf" 1 >"$DIR/vlarb.sw" 2>&1 || fail "smpquery vlarb $leaf 1: $(cat "$DIR/vlarb.sw")"
for f in "$DIR/vlarb.ca" "$DIR/vlarb.sw"; do
	python3 "$QOSCHECK" vlarb --max-vls 4 "$f" >"$f.check" 2>&1 || { cat "$f" >&2; fail "VLArb ($f): $(cat "$f.check")"; }
done
for lp in "$h1 1" "$leaf 1"; do
	# shellcheck disable=SC2086
	ops=$(on_host H-1 smpquery portinfo $lp | sed -n 's/^OperVLs:\.*//p')
	[ "$ops" = VL0-7 ] || fail "OperVLs of $lp: '$ops', want VL0-7"
done
pass "VLArb on a CA port and a leaf port: $(cat "$DIR/vlarb.ca.check"); OperVLs VL0-7"

on_host H-1 saquery -p --src-to-dst "$h1:$h2" >"$DIR/pr" 2>&1 || fail "saquery -p $h1:$h2: $(cat "$DIR/pr")"
sl=$(sed -n 's/^[[:space:]]*sl\.\.*\(0x[0-9a-f]*\|[0-9]*\)$/\1/p' "$DIR/pr")
[ -n "$sl" ] || fail "PathRecord H-1 -> H-2: no SL: $(cat "$DIR/pr")"
[ $((sl)) = 2 ] || fail "PathRecord H-1 -> H-2: SL '$sl', want 2"
pass "saquery -p H-1 -> H-2: SL 2 (the fast lane)"

ctl --json verify >"$DIR/verify" 2>&1 || fail "ibsmctl verify: $(head -c 600 "$DIR/verify")"
grep -q 'qos: [1-9][0-9]* SL-to-VL tables read, 0 differ from the SM' "$DIR/verify" ||
	fail "verify: no qos line: $(head -c 600 "$DIR/verify")"
pass "ibsmctl verify: $(grep -o 'qos: [^\\]*' "$DIR/verify" | head -n 1)"

ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
wait_until 60 ups_over 1 && kill -0 "$SM_PID" 2>/dev/null || fail "no second heavy sweep: $(tail -n 3 "$DIR/err")"
stable
[ "$(sets 0017)" = "$SL2VL_SETS" ] && [ "$(sets 0018)" = "$VLARB_SETS" ] ||
	fail "the second heavy sweep wrote $(($(sets 0017) - SL2VL_SETS)) SL2VL and $(($(sets 0018) - VLARB_SETS)) VLArb tables"
pass "bring-up wrote $SL2VL_SETS SL2VL and $VLARB_SETS VLArb tables; a second heavy sweep none"
kill -TERM "$SM_PID"
wait_pid "$SM_PID" 10 || fail "ibsmd did not stop on SIGTERM"
sim_stop
