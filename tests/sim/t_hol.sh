#!/bin/bash
# HOL exposure (ibsmd --offline --verify --pattern, no ibsim): on a small
# 2-level fat tree with one hot spot, vFtree's and VOQsw's SLs (VOQsw: full
# VOQ fits in its 8 SLs here) leave fewer victims sharing a (link, VL) with
# hot traffic than mode none; the routes are the
# same, so the figure with VLs ignored is the same; the per-VL dependency
# graph has no cycle; a pattern file works and its errors name file:line;
# --pattern without --verify is refused.
. "$(dirname "$0")/lib.sh"

IBSMD="$SIM_ROOT/build/ibsmd"
net="$SIM_TMP/fabric.net"
python3 "$SIM_FABGEN" ftree2 --radix 8 -o "$net" 2>/dev/null || fail "fabgen failed"

# hol MODE YAML: runs the hot spot H-0, leaves the output in $SIM_TMP/MODE.out
hol() {
	printf '%s\n' "$2" >"$SIM_TMP/$1.yaml"
	"$IBSMD" --offline "$net" -c "$SIM_TMP/$1.yaml" --verify --pattern hotspot:H-0 \
		>"$SIM_TMP/$1.out" 2>"$SIM_TMP/$1.err" ||
		{ cat "$SIM_TMP/$1.out" "$SIM_TMP/$1.err"; fail "$1: ibsmd failed"; }
	grep -q '^hol: pattern=hotspot:H-0 ' "$SIM_TMP/$1.out" ||
		{ cat "$SIM_TMP/$1.out"; fail "$1: no hol: line"; }
}
# field MODE NAME: a figure of the hol: line (exposed: the first, with VLs)
field() {
	sed -n "s/^hol: [^;]* $2=\([0-9]*\).*/\1/p" "$SIM_TMP/$1.out"
}
novl() {
	sed -n 's/.*VLs ignored: exposed=\([0-9]*\) .*/\1/p' "$SIM_TMP/$1.out"
}

hol none 'qos: {mode: none}'
hol vftree 'qos: {mode: vftree, max_vls: 4}'
hol voqsw 'qos: {mode: voqsw, sls: 8, max_vls: 8}'
n_none=$(field none exposed)
[ -n "$n_none" ] || fail "no exposed= figure"
[ "$(novl none)" = "$n_none" ] || fail "none: VLs ignored $(novl none), exposed $n_none"
for m in vftree voqsw; do
	n=$(field $m exposed)
	[ -n "$n" ] || fail "$m: no exposed= figure"
	[ "$(field none victims)" = "$(field $m victims)" ] || fail "$m: victims differ"
	[ "$(novl $m)" = "$n_none" ] || fail "$m: VLs ignored $(novl $m), none's $n_none"
	[ "$n" -lt "$n_none" ] || fail "$m exposes $n victims, none $n_none: not fewer"
done
grep -q '^qos: voqsw: .*(100.0%)' "$SIM_TMP/voqsw.out" ||
	{ cat "$SIM_TMP/voqsw.out"; fail "voqsw: not full VOQ on this tree"; }
pass "hot spot H-0: exposed victims none $n_none, vftree 4 VLs $(field vftree exposed), voqsw 8 SLs $(field voqsw exposed) of $(field none victims)"

grep -q 'channel dependencies over (link, VL), VLs 0-3: .* no cycle$' "$SIM_TMP/vftree.out" ||
	{ cat "$SIM_TMP/vftree.out"; fail "vftree: no per-VL graph without a cycle"; }
grep -q 'channel dependencies (VL0): ' "$SIM_TMP/none.out" ||
	fail "none: the one-VL graph line changed"
grep -q 'channel dependencies over (link, VL), VLs 0-7: .* no cycle$' "$SIM_TMP/voqsw.out" ||
	{ cat "$SIM_TMP/voqsw.out"; fail "voqsw: no per-VL graph without a cycle"; }
for m in vftree voqsw; do
	grep -q '^verify: OK: .*, 0 on a VL the link lacks' "$SIM_TMP/$m.out" ||
		fail "$m: verify not OK"
done
pass "vftree, voqsw: per-(link, VL) dependency graph without a cycle, every VL on its links"

printf '# a victim beside the hot flow\nH-4 H-0 hot\n"H-5" H-8\n' >"$SIM_TMP/pat"
"$IBSMD" --offline "$net" --verify --pattern "$SIM_TMP/pat" >"$SIM_TMP/pat.out" 2>&1 ||
	{ cat "$SIM_TMP/pat.out"; fail "pattern file: ibsmd failed"; }
grep -q 'hol: .* flows=2 hot=1 victims=1 ' "$SIM_TMP/pat.out" ||
	{ cat "$SIM_TMP/pat.out"; fail "pattern file: wrong counts"; }
printf 'H-4 H-0 hot\nH-5 nosuch\n' >"$SIM_TMP/bad"
"$IBSMD" --offline "$net" --verify --pattern "$SIM_TMP/bad" >/dev/null 2>"$SIM_TMP/bad.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "$SIM_TMP/bad:2: no CA port with a LID named 'nosuch'" "$SIM_TMP/bad.err" ||
	{ cat "$SIM_TMP/bad.err"; fail "unknown name: exit $rc"; }
"$IBSMD" --offline "$net" --pattern hotspot:H-0 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "--pattern without --verify: exit $rc, want 2"
pass "pattern file counted; unknown name refused at file:line; --pattern needs --verify"
