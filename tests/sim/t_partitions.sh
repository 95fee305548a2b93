#!/bin/bash
# Partitions (ibsmd.yaml(5) Partitions) on ibsim: three tenants and the
# default partition on a 2-level tree.  smpquery pkeys reads back a host of
# each tenant, a limited member, a host in none, the SM's port, a switch's
# port 0 and the leaf port facing a host (its host's table: the leaves
# enforce); a reload that moves H-13 from tenantA to tenantC writes exactly
# two P_Key blocks (H-13's and its leaf port's) and as many LFT blocks as
# dump_fts shows changed (pftree); a trap 257 from H-5 is counted in
# `ibsmctl partitions --json`.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
pol="$SIM_TMP/policy.yaml"
MADSEND="$SIM_ROOT/build/madsend"
[ -x "$MADSEND" ] || fail "build/madsend is missing: run make"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
done_lines() { grep -c 'heavy sweep done' "$log"; }
more_done_than() { [ "$(done_lines)" -gt "$1" ]; }

# policy C_MEMBERS A_MEMBERS: the tenants (H-N on leaf L0-S(N/4) port N%4+1),
# routed by $engine
policy() {
	cat >"$pol" <<EOF
routing: {engine: $engine}
default_partition: {membership: limited}
partitions:
  - name: tenantA
    pkey: 0x0001
    members: [$2]
  - name: tenantB
    pkey: 0x0002
    members: ["H-2", "H-6", "H-10", {node: "H-14", membership: limited}]
  - name: tenantC
    pkey: 0x0003
    policy: phy-isolation
    members: [$1]
EOF
}
engine=pftree	# partition-aware: a membership change may move routes
policy '"H-3", "H-7", "H-11"' '"H-1", "H-5", "H-9", "H-13"'
out=$("$IBSMD" --check -c "$pol" 2>&1) || fail "policy refused: $out"

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
wait_up 20 "$log"

# pkeys WHO [LID PORT]: the first entries of a P_Key table ("0xffff 0x8001 ...")
pkeys() {
	local out
	if [ $# -eq 1 ]; then
		out=$(on_host "$1" smpquery -D pkeys 0 2>&1)
	else
		out=$(on_host H-0 smpquery pkeys "$2" "$3" 2>&1)
	fi || fail "smpquery pkeys $*: $out"
	sed -n 's/^ *0: *//p' <<<"$out" | tr -s ' ' | cut -d' ' -f1-4
}
expect() {	# WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: P_Keys '$2', want '$3'"
}
lid_of() {	# DESCRIPTION: the LID of its port 0 / port 1
	ctl --json lids | python3 -c '
import json, sys
for e in json.load(sys.stdin)["lids"]:
    if e["description"] == sys.argv[1]:
        print(e["lid"]); break' "$1"
}
leaf3=$(lid_of L0-S3)
leaf1=$(lid_of L0-S1)
[ -n "$leaf3" ] && [ -n "$leaf1" ] || fail "no LID for the leaves: $(ctl lids 2>&1 | head -n 3)"
expect "H-1 (tenantA)" "$(pkeys H-1)" "0x7fff 0x8001 0x0000 0x0000"
expect "H-6 (tenantB)" "$(pkeys H-6)" "0x7fff 0x8002 0x0000 0x0000"
expect "H-14 (tenantB, limited)" "$(pkeys H-14)" "0x7fff 0x0002 0x0000 0x0000"
expect "H-7 (tenantC)" "$(pkeys H-7)" "0x7fff 0x8003 0x0000 0x0000"
expect "H-15 (none)" "$(pkeys H-15)" "0x7fff 0x0000 0x0000 0x0000"
expect "H-0 (the SM)" "$(pkeys H-0)" "0xffff 0x0000 0x0000 0x0000"
expect "L0-S3 port 0" "$(pkeys L0-S3 "$leaf3" 0)" "0xffff 0x0000 0x0000 0x0000"
expect "L0-S3 port 2 (H-13)" "$(pkeys L0-S3 "$leaf3" 2)" "0x7fff 0x8001 0x0000 0x0000"
expect "L0-S1 port 2 (H-5)" "$(pkeys L0-S1 "$leaf1" 2)" "0x7fff 0x8001 0x0000 0x0000"
pass "P_Key tables: tenants full (0x800N) or limited, hosts 0x7fff at index 0, SM and switch 0xffff, leaf ports hold their host's"

on_host H-0 dump_fts -n >"$SIM_TMP/before.lfts" 2>/dev/null || fail "dump_fts"
n=$(done_lines)
policy '"H-3", "H-7", "H-11", "H-13"' '"H-1", "H-5", "H-9"'
ctl reload >/dev/null || fail "ibsmctl reload: $(ctl reload 2>&1)"
wait_until 10 more_done_than "$n" || fail "no heavy sweep after the reload: $(tail -n 3 "$log")"
grep -q 'partitions changed: partitions' "$log" || fail "the reload did not log the change"
on_host H-0 dump_fts -n >"$SIM_TMP/after.lfts" 2>/dev/null || fail "dump_fts"
line=$(grep 'heavy sweep done' "$log" | tail -n 1)
writes=$(sed -n 's/.* \([0-9]*\) P_Key writes.*/\1/p' <<<"$line")
blocks=$(sed -n 's/.*: \([0-9]*\) LFT blocks.*/\1/p' <<<"$line")
changed=$(python3 - "$SIM_TMP/before.lfts" "$SIM_TMP/after.lfts" <<'EOF'
import re, sys
def blocks(path):  # (switch, block) -> its entries, from dump_fts -n
    out, sw = {}, None
    for line in open(path):
        m = re.match(r"Unicast lids \[.*\] of switch .*guid (0x[0-9a-f]+)", line)
        if m:
            sw = m.group(1)
            continue
        m = re.match(r"(0x[0-9a-f]+) (\d+) ", line)
        if m and sw:
            lid = int(m.group(1), 16)
            out.setdefault((sw, lid // 64), {})[lid] = m.group(2)
    return out
a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
assert len(a) >= 6 and len(b) >= 6, "dump_fts: no LFT blocks read"
print(sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k)))
EOF
)
[ "$writes" = 2 ] || fail "the move wrote $writes P_Key blocks, want 2 (H-13's and its leaf port's): $line"
[ "$blocks" = "$changed" ] || fail "$blocks LFT blocks written, dump_fts shows $changed changed: $line"
expect "H-13 moved" "$(pkeys H-13)" "0x7fff 0x8003 0x0000 0x0000"
expect "L0-S3 port 2 after the move" "$(pkeys L0-S3 "$leaf3" 2)" "0x7fff 0x8003 0x0000 0x0000"
expect "H-1 untouched" "$(pkeys H-1)" "0x7fff 0x8001 0x0000 0x0000"
pass "reload moving H-13 to tenantC ($engine): 2 P_Key writes, $blocks LFT blocks = $changed changed in dump_fts"

smlid=$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sm_lid"])')
out=$(on_host H-5 "$MADSEND" traps 3 "$smlid" 257:self 2>&1) || fail "madsend traps: $out"
count_257() {
	ctl --json partitions | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(sum(v["count"] for v in j["violations"] if v["guid"] == sys.argv[1] and v["port"] == 1))' "$(host_guid H-5)"
}
got_three() { [ "$(count_257)" = 3 ]; }
wait_until 5 got_three || fail "ibsmctl partitions: $(ctl --json partitions)"
ctl --json partitions | python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["partitions"]}
assert p["default"]["pkey"] == "0x7fff", p
assert (p["tenantC"]["full"], p["tenantC"]["policy"]) == (4, "phy-isolation"), p
assert (p["tenantB"]["full"], p["tenantB"]["limited"]) == (3, 1), p' ||
	fail "ibsmctl partitions: $(ctl partitions)"
pass "3 traps 257 from H-5 counted for its port; ibsmctl partitions: $(ctl partitions | sed -n 4p)"
