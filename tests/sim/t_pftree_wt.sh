#!/bin/bash
# pFTree-Wt's receivers offline (no ibsim; about a second): `ibsmd
# --offline --verify --receivers` on the 32-node XGFT of the pFTree
# paper's Table 3 with its Section 7.1 setting (tests/sim/pftree_wt_table.sh:
# an evenly spread victim of 8 hosts, 1 and 2 receivers a leaf, seeds
# 1-3).  pFTree-Wt (receivers weigh 100) has no down-direction
# contention in any run; pFTree (--receiver-weight 1) has, 2 on average
# as the paper's Fig. 13a; the victim's exposure under pFTree is the 192
# of Fig. 15.  A receivers file is read by node description, node-name
# map name and node GUID; a bad --receivers (a malformed random:, a file
# missing or naming no CA) exits 2 saying why.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/x32.net"
gen xgft --m 8,4 --w 1,4 -o "$net"
# H-0 and H-4: ftree (the default engine) takes a leaf's hosts round-robin
# over its 4 up links, so both go down from one spine to leaf 0 and up to
# it from the 3 other leaves; H-0 and H-1 go apart
printf '# receivers\nH-0\n"H-4"\n' >"$SIM_TMP/rcv.txt"
"$IBSMD" --offline "$net" --verify --receivers "$SIM_TMP/rcv.txt" >"$SIM_TMP/out" 2>&1 ||
	fail "a receivers file: $(head -n 2 "$SIM_TMP/out") ... $(tail -n 1 "$SIM_TMP/out")"
grep -q '^verify: receivers: .*rcv.txt, weight 100: 2 receivers, 992 flows$' "$SIM_TMP/out" ||
	fail "receivers line: $(grep receivers "$SIM_TMP/out")"
grep -q '^verify: contention: up 3 on 3 of 16 links (max 1), down 1 on 1 of 16 links (max 1)$' "$SIM_TMP/out" ||
	fail "contention of H-0, H-4: $(grep contention "$SIM_TMP/out")"
# by the node-name map's name and by node GUID: the same two receivers
printf '0x0002c90200000000 "alpha"\n' >"$SIM_TMP/names.map"
printf 'node_name_map: %s\n' "$SIM_TMP/names.map" >"$SIM_TMP/map.yaml"
printf 'alpha\n0x0002c90200000010\n' >"$SIM_TMP/rcv1.txt"
"$IBSMD" --offline "$net" -c "$SIM_TMP/map.yaml" --verify --receivers "$SIM_TMP/rcv1.txt" >"$SIM_TMP/out" 2>&1 ||
	fail "receivers by map name and node GUID: $(head -n 2 "$SIM_TMP/out") ... $(tail -n 1 "$SIM_TMP/out")"
grep -q '^verify: contention: up 3 on 3 of 16 links (max 1), down 1 on 1 of 16 links (max 1)$' "$SIM_TMP/out" ||
	fail "contention of alpha (H-0), 0x...10 (H-4): $(grep contention "$SIM_TMP/out")"
printf 'H-0\nH-1\n' >"$SIM_TMP/rcv2.txt"
"$IBSMD" --offline "$net" --verify --receivers "$SIM_TMP/rcv2.txt" >"$SIM_TMP/out" 2>&1 ||
	fail "a receivers file: $(head -n 2 "$SIM_TMP/out") ... $(tail -n 1 "$SIM_TMP/out")"
grep -q '^verify: contention: up 0 on 0 of 16 links (max 0), down 0 on 0 of 16 links (max 0)$' "$SIM_TMP/out" ||
	fail "contention of H-0, H-1: $(grep contention "$SIM_TMP/out")"

table=$(bash "$SIM_ROOT/tests/sim/pftree_wt_table.sh" 32 "1 2 3" 2>"$SIM_TMP/sweep.err") ||
	fail "the 32-node sweep: $(cat "$SIM_TMP/sweep.err") $table"
# row ROUTING COLUMN: a cell of the table (columns counted from 1)
row() {
	awk -F' *[|] *' -v r="$1" -v c="$2" '$4 == r { print $(c + 1) }' <<<"$table"
}
[ "$(row pFTree-Wt 5)" = "0.00 / 0" ] || fail "pFTree-Wt down contention: $(row pFTree-Wt 5)"
[ "$(row pFTree-Wt 6)" = "0.00 / 0" ] || fail "pFTree-Wt down contended links: $(row pFTree-Wt 6)"
[ "$(row pFTree 5)" = "2.00 / 4" ] || fail "pFTree down contention: $(row pFTree 5) (the paper: mean 2)"
[ "$(row pFTree 11)" = "192.0" ] || fail "pFTree victim exposure: $(row pFTree 11) (the paper's Fig. 15: 192)"
note "32 nodes: down contention pFTree $(row pFTree 5), pFTree-Wt $(row pFTree-Wt 5); victim exposure pFTree $(row pFTree 11), pFTree-Wt $(row pFTree-Wt 11)"

# refused: exit 2 with the reason
refused() {
	local why=$1
	shift
	"$IBSMD" --offline "$net" "$@" >"$SIM_TMP/bad" 2>&1
	local rc=$?
	[ "$rc" -eq 2 ] || fail "$* exited $rc, not 2: $(cat "$SIM_TMP/bad")"
	grep -q -- "$why" "$SIM_TMP/bad" || fail "$*: no '$why': $(cat "$SIM_TMP/bad")"
}
refused "bad --receivers 'random:0'" --verify --receivers random:0
refused "bad --receivers 'random:2x'" --verify --receivers random:2x
refused "No such file or directory" --verify --receivers "$SIM_TMP/none.txt"
printf 'H-0\nH-99\n' >"$SIM_TMP/unknown.txt"
refused "unknown.txt:2: no CA port with a LID named 'H-99'" --verify --receivers "$SIM_TMP/unknown.txt"
refused "no partition 'victim'" --verify --receivers random:1,victim
refused "goes with --verify" --receivers random:1
refused "goes with --receivers" --verify --receiver-weight 5
refused "bad --receiver-weight '0'" --verify --receivers random:1 --receiver-weight 0
pass "pFTree-Wt: no down contention at 32 nodes; the receivers' options checked"
