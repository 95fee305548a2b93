#!/bin/bash
# The LID space on the emulator (--emulate --once), judged from ibsmd's
# --dump-topology and its guid2lid file:
#  1. a state file whose reservations for absent GUIDs fill every unicast
#     LID: each present port gets a LID, taken back from the oldest
#     reservations (two-field lines of an old file first, then by last-seen
#     time); the next oldest and the rest stay; exit 0.  The same under
#     ibsim, checked with infiniband-diags.
#  2. more present ports than LIDs (LMC 7, 128 LIDs a CA port, 432 hosts):
#     --once exits 1 and says how many ports were left without a LID.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/small.net"
gen ftree2 --leaves 4 --spines 2 --hosts-per-leaf 4 --radix 8 -o "$net"

# the present port GUIDs, from a first bring-up
"$IBSMD" --emulate "$net" --once -S "$SIM_TMP/st0" >"$SIM_TMP/0.out" 2>"$SIM_TMP/0.err" ||
	fail "first bring-up: $(tail -n 3 "$SIM_TMP/0.err")"
grep -v '^#' "$SIM_TMP/st0/guid2lid" | awk '{print $1}' >"$SIM_TMP/present"
present=$(wc -l <"$SIM_TMP/present")
[ "$present" -gt 2 ] || fail "only $present ports recorded"

# every LID reserved by an absent GUID; LIDs 30000 and 30001 in the old
# two-field format, the others with scattered last-seen times
mkdir -p "$SIM_TMP/full"
python3 - "$SIM_TMP/full/guid2lid" "$present" "$SIM_TMP/expect" <<'PY'
import sys
path, present, expect = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MAX = 0xBFFF
def seen(lid):
    return 1700000000 + (lid * 7919) % MAX
old = {30000, 30001}
with open(path, "w") as fp:
    fp.write("# ibsmd GUID -> LID\n")
    for lid in range(1, MAX + 1):
        guid = 0xfe00000000 + lid
        if lid in old:
            fp.write("0x%016x %d\n" % (guid, lid))
        else:
            fp.write("0x%016x %d %d\n" % (guid, lid, seen(lid)))
rest = sorted((l for l in range(1, MAX + 1) if l not in old), key=seen)
taken = sorted(old) + rest[:present - len(old)]
with open(expect, "w") as fp:
    fp.write("taken %s\n" % " ".join(map(str, sorted(taken))))
    fp.write("kept 0x%016x\n" % (0xfe00000000 + rest[present - len(old)]))
PY
cp "$SIM_TMP/full/guid2lid" "$SIM_TMP/full.orig"
"$IBSMD" --emulate "$net" --once -S "$SIM_TMP/full" --dump-topology "$SIM_TMP/full.topo" \
	>"$SIM_TMP/once.out" 2>"$SIM_TMP/full.err" ||
	fail "bring-up with the space full of reservations: $(grep -v notice "$SIM_TMP/full.err" | tail -n 3)"
[ "$(summary lids)" = "$present" ] || fail "lids=$(summary lids), want $present"
python3 "$SIM_LIDS" "$SIM_TMP/full.topo" >"$SIM_TMP/full.lids"
[ "$(wc -l <"$SIM_TMP/full.lids")" = "$present" ] || fail "$(wc -l <"$SIM_TMP/full.lids") ports in the dump, want $present"
awk '$2 == 0 { bad = 1 } END { exit bad }' "$SIM_TMP/full.lids" || fail "a port at LID 0"
got=$(awk '{print $2}' "$SIM_TMP/full.lids" | sort -n | tr '\n' ' ' | sed 's/ $//')
[ "taken $got" = "$(sed -n 1p "$SIM_TMP/expect")" ] ||
	fail "LIDs given: $got; want the oldest: $(sed -n 1p "$SIM_TMP/expect")"
pass "$present ports took the $present oldest reservations' LIDs"

# the file: the taken reservations gone, the next oldest kept, present ports dated
file="$SIM_TMP/full/guid2lid"
[ "$(grep -vc '^#' "$file")" = 49151 ] || fail "$(grep -vc '^#' "$file") entries in guid2lid, want 49151"
for lid in $(sed -n '1s/^taken //p' "$SIM_TMP/expect"); do
	g=$(printf '0x%016x' $((0xfe00000000 + lid)))
	! grep -q "^$g " "$file" || fail "reservation $g (LID $lid) still in guid2lid"
done
kept=$(sed -n 's/^kept //p' "$SIM_TMP/expect")
grep -q "^$kept " "$file" || fail "the next oldest reservation $kept was dropped"
now=$(date +%s)
while read -r g; do
	t=$(awk -v g="$g" '$1 == g {print $3}' "$file")
	[ -n "$t" ] && [ "$t" -gt $((now - 600)) ] || fail "present port $g: last seen '$t'"
done <"$SIM_TMP/present"
n=$(grep -c 'dropped the reservation of absent GUID' "$SIM_TMP/full.err")
[ "$n" = "$present" ] || fail "$n reclaimed reservations logged, want $present"
pass "guid2lid: the $present taken reservations dropped and logged, the rest kept, present ports dated"

# the same under ibsim, judged by infiniband-diags: every port Active with
# a LID of its own and reachable (a fresh copy of the full table)
mkdir -p "$SIM_TMP/full-sim"
cp "$SIM_TMP/full.orig" "$SIM_TMP/full-sim/guid2lid"
sim_start "$net"
ibsmd_once H-0 "$SIM_TMP/full-sim" || fail "ibsim bring-up with the space full: $(grep -v notice "$SIM_TMP/once.err" | tail -n 3)"
check_up "$SIM_TMP/sim"
sim_stop
python3 "$SIM_LIDS" "$SIM_TMP/sim.topo" | awk '{print $2}' | sort -n | tr '\n' ' ' | sed 's/ $//' >"$SIM_TMP/sim.got"
[ "taken $(cat "$SIM_TMP/sim.got")" = "$(sed -n 1p "$SIM_TMP/expect")" ] ||
	fail "ibsim: LIDs $(cat "$SIM_TMP/sim.got"); want the oldest: $(sed -n 1p "$SIM_TMP/expect")"
pass "ibsim: every port Active and routed on the oldest reservations' LIDs"

# more ports than the space holds
big="$SIM_TMP/big.net"
gen ftree2 --leaves 12 --spines 6 --hosts-per-leaf 36 --radix 48 -o "$big"
printf 'lmc: 7\n' >"$SIM_TMP/lmc7.yaml"
rc=0
"$IBSMD" --emulate "$big" --once -c "$SIM_TMP/lmc7.yaml" -S "$SIM_TMP/st-big" \
	>"$SIM_TMP/once.out" 2>"$SIM_TMP/big.err" || rc=$?
[ "$rc" = 1 ] || fail "LID space too small: exit $rc, want 1"
grep -q 'error.*49 ports were left without a LID' "$SIM_TMP/big.err" ||
	fail "no reason on stderr: $(grep -v notice "$SIM_TMP/big.err" | tail -n 3)"
# 18 switches (one LID each) and 383 CA ports of 128 LIDs
[ "$(summary lids)" = $((18 + 383 * 128)) ] || fail "lids=$(summary lids), want $((18 + 383 * 128))"
# the hosts without a LID stay off the subnet: both ends of their links stay
# INIT (504 links, 1008 ends; 49 links not activated)
act=$(sed -n 's/.* \([0-9]*\) ports activated.*/\1/p' "$SIM_TMP/big.err" | head -n 1)
[ "$act" = $((1008 - 2 * 49)) ] || fail "$act ports activated, want $((1008 - 2 * 49)): a host without a LID was activated"
pass "432 hosts at LMC 7: 49 without a LID and not activated, --once exit 1"
