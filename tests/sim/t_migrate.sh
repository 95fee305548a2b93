#!/bin/bash
# ibsmd --offline --migrate on the vSwitch paper's four Table 2 fabrics
# (Section 7.1; 36-port switches): the migration code's writes handed to the
# counting transport.  Full reconfiguration = switches x LFT blocks (from
# the bring-up's max_lid) = 216 / 594 / 104,004 / 336,960; the worst-case
# LID swap (ItRC, prepopulated, LIDs in different blocks) exactly 72 / 108
# on the 2-level trees and at most 2 x switches (1,944 / 3,240) on the
# 3-level ones, the figure reached printed; best case (same leaf) 1.
# FTreeMinRC marks the closed form's count (20, 20, 362, 362) and its
# marking takes under 1 ms on the 11664-host tree and under 20 ms on the
# 20736-host 12-ary-4-tree.  On a hypervisor fabric (vSwitches named by
# the policy, both LID schemes) the VF-to-VF plan: same leaf 1 block on 1
# switch (dynamic) / <= 2 (prepopulated), the vSwitch blocks apart, same
# vSwitch no physical block.  No ibsim: everything is offline, in seconds.
. "$(dirname "$0")/common.sh"

# mig NET SRC DST [options]: the migration: line's key=value pairs in $M
mig() {
	local net=$1 src=$2 dst=$3
	shift 3
	"$IBSMD" --offline "$net" -S "$SIM_TMP/st" --migrate "$src" "$dst" "$@" \
		>"$SIM_TMP/mig.out" 2>"$SIM_TMP/mig.err" ||
		fail "--migrate $src $dst $*: exit $? ($(tail -n 2 "$SIM_TMP/mig.err"))"
	M=$(grep '^migration:' "$SIM_TMP/mig.out") || fail "no migration: line ($*)"
	MAXLID=$(grep '^subnet up:' "$SIM_TMP/mig.out" | tr ' ' '\n' | sed -n 's/^max_lid=//p')
	SWITCHES=$(grep '^subnet up:' "$SIM_TMP/mig.out" | tr ' ' '\n' | sed -n 's/^switches=//p')
}
val() { tr ' ' '\n' <<<"$M" | sed -n "s/^$1=//p"; }

# row NAME NET FULL WORST-SRC WORST-DST EXACT-WORST MARKED
row() {
	local name=$1 net=$2 full=$3 ws=$4 wd=$5 exact=$6 marked=$7 b w
	mig "$net" "$ws" "$wd" --method full --scheme prepopulated
	b=$(val lft_blocks)
	[ "$b" -eq $(( SWITCHES * (MAXLID / 64 + 1) )) ] ||
		fail "$name full: $b blocks, $SWITCHES switches x $((MAXLID / 64 + 1)) blocks"
	[ "$b" -eq "$full" ] || fail "$name full: $b, Table 2 says $full"
	mig "$net" "$ws" "$wd" --method itrc --scheme prepopulated
	w=$(val lft_blocks)
	[ "$w" -le $(( 2 * SWITCHES )) ] || fail "$name worst: $w > 2 x $SWITCHES"
	[ "$w" -eq $(( 2 * $(val switches_written) )) ] ||
		fail "$name worst: $w blocks on $(val switches_written) switches (LIDs in one block?)"
	[ -z "$exact" ] || [ "$w" -eq "$exact" ] || fail "$name worst: $w, Table 2 says $exact"
	mig "$net" H-0 H-1 --method ftreeminrc --scheme dynamic
	[ "$(val lft_blocks)" -eq 1 ] && [ "$(val switches_written)" -eq 1 ] ||
		fail "$name best (H-0 to H-1): $M"
	mig "$net" H-0 H-1 --scheme prepopulated
	[ "$(val lft_blocks)" -le 2 ] || fail "$name same leaf, prepopulated: $M"
	mig "$net" "$ws" "$wd"
	[ "$(val method)" = ftreeminrc ] && [ "$(val scheme)" = dynamic ] ||
		fail "$name: defaults are not ftreeminrc/dynamic: $M"
	[ "$(val switches_marked)" -eq "$marked" ] ||
		fail "$name ftreeminrc $ws->$wd: marked $(val switches_marked), closed form $marked"
	pass "$name: full $b, worst swap $w of $((2 * SWITCHES)) ($ws->$wd, itrc prepopulated), best 1; ftreeminrc marks $marked, writes $(val lft_blocks), mark_us=$(val mark_us)"
	MARK_US=$(val mark_us)
}

gen ftree2 --radix 36 -o "$SIM_TMP/t324.net"
gen ftree2 --radix 36 --leaves 36 --spines 18 --hosts-per-leaf 18 -o "$SIM_TMP/t648.net"
gen kary --k 18 --n 3 -o "$SIM_TMP/t5832.net"
gen ftree3 --radix 36 -o "$SIM_TMP/t11664.net"
row 324 "$SIM_TMP/t324.net" 216 H-0 H-300 72 20
row 648 "$SIM_TMP/t648.net" 594 H-0 H-640 108 20
row 5832 "$SIM_TMP/t5832.net" 104004 H-0 H-5831 "" 362
row 11664 "$SIM_TMP/t11664.net" 336960 H-0 H-11663 "" 362
[ "$MARK_US" -lt 1000 ] || fail "11664: marking took $MARK_US us (>= 1 ms)"

gen kary --k 12 --n 4 -o "$SIM_TMP/t20736.net"
mig "$SIM_TMP/t20736.net" H-0 H-20735
[ "$(val switches_marked)" -eq 2042 ] || fail "12-ary-4: marked $(val switches_marked), closed form 2042"
[ "$(val mark_us)" -lt 20000 ] || fail "12-ary-4: marking took $(val mark_us) us (>= 20 ms)"
pass "12-ary-4-tree (6912 switches): H-0->H-20735 marks 2042, mark_us=$(val mark_us) (levels_us=$(val levels_us), once per bring-up)"

# not a fat tree: ftreeminrc falls back to itrc, and says so
gen mesh --x 3 --y 3 -o "$SIM_TMP/mesh.net"
mig "$SIM_TMP/mesh.net" H-0 H-8 -R minhop
[ "$(val method)" = itrc ] && [ "$(val fallback)" = itrc ] || fail "mesh: $M"
grep -q "itrc instead" "$SIM_TMP/mig.err" || fail "mesh: no fallback notice"
pass "mesh: ftreeminrc falls back to itrc with a notice"

# hypervisors: 2 spines, 4 leaves, 3 vSwitches V-l-i a leaf (PF on port
# 2, VFs F-l-i-k on 3..6), one plain host a leaf.  The VF plan needs the
# policy's vSwitches marked in --offline (sm/model/vswitch.c).
python3 - "$SIM_TMP/hv.net" <<'PY'
import sys
o = []
for s in range(2):
    o.append('switchguid=0x%x\nSwitch\t8 "S%d"' % (0x100 + s, s))
    o += ['[%d]\t"L%d"[%d]' % (l + 1, l, 7 + s) for l in range(4)] + ['']
for l in range(4):
    o.append('switchguid=0x%x\nSwitch\t8 "L%d"' % (0x200 + l, l))
    o += ['[%d]\t"V-%d-%d"[1]' % (i + 1, l, i) for i in range(3)]
    o.append('[4]\t"H%d"[1]\n[7]\t"S0"[%d]\n[8]\t"S1"[%d]\n' % (l, l + 1, l + 1))
    o.append('caguid=0x%x\nHca\t1 "H%d"\n[1]\t"L%d"[4]\n' % (0x1000 + l, l, l))
    for i in range(3):
        h = l * 3 + i
        o.append('switchguid=0x%x\nSwitch\t6 "V-%d-%d"\n[1]\t"L%d"[%d]\n[2]\t"P-%d-%d"[1]'
                 % (0x300 + h, l, i, l, i + 1, l, i))
        o += ['[%d]\t"F-%d-%d-%d"[1]' % (3 + k, l, i, k) for k in range(4)]
        o.append('\ncaguid=0x%x\nHca\t1 "P-%d-%d"\n[1]\t"V-%d-%d"[2]\n' % (0x2000 + 16 * h, l, i, l, i))
        o += ['caguid=0x%x\nHca\t1 "F-%d-%d-%d"\n[1]\t"V-%d-%d"[%d]\n'
              % (0x2000 + 16 * h + 1 + k, l, i, k, l, i, 3 + k) for k in range(4)]
open(sys.argv[1], 'w').write('\n'.join(o) + '\n')
PY
for scheme in dynamic prepopulated; do
	printf 'virtualization:\n  lid_scheme: %s\n  vswitches: ["V-*"]\n' "$scheme" \
		>"$SIM_TMP/hv.yaml"
	hv() { mig "$SIM_TMP/hv.net" "$1" "$2" -c "$SIM_TMP/hv.yaml" -R ftree --scheme "$scheme"; }
	hv F-0-0-0 F-0-1-2
	[ "$(val method)" = ftreeminrc ] && [ "$(val switches_written)" -eq 1 ] &&
		[ "$(val vswitch_blocks)" -ge 2 ] && [ "$(val vswitches_written)" -eq 2 ] ||
		fail "hypervisors $scheme, same leaf: $M"
	b=$(val lft_blocks)
	if [ "$scheme" = dynamic ]; then
		[ "$b" -eq 1 ] && [ "$(val vswitch_blocks)" -eq 2 ] ||
			fail "hypervisors dynamic, same leaf: $M"
	else
		[ "$b" -ge 1 ] && [ "$b" -le 2 ] || fail "hypervisors prepopulated, same leaf: $M"
	fi
	hv F-0-0-0 F-3-1-2
	[ "$(val switches_marked)" -eq 4 ] && [ "$(val lft_blocks)" -le $((2 * 6)) ] &&
		[ "$(val vswitches_written)" -eq 2 ] ||
		fail "hypervisors $scheme, another leaf: $M"
	o=$(val lft_blocks)
	hv F-0-0-0 F-0-0-1
	[ "$(val lft_blocks)" -eq 0 ] && [ "$(val vswitch_blocks)" -eq 1 ] ||
		fail "hypervisors $scheme, same vSwitch: $M"
	pass "hypervisors $scheme: same leaf $b block(s) + vSwitch blocks apart, another leaf $o on 4 marked, same vSwitch 0 + 1"
done
