#!/bin/bash
# Self-test of check_fabric.py against OpenSM: the checker must reject the
# fabric before any SM ran, accept it after `opensm -o`, and reject dumps
# with a corrupted LFT (wrong port, loop, hole).
. "$(dirname "$0")/lib.sh"

command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

net="$SIM_TMP/fabric.net"
python3 "$SIM_FABGEN" ftree2 --radix 8 --dual-port 1 -o "$net" 2>/dev/null ||
	fail "fabgen failed"
sim_start "$net"

# expect_fail NAME DUMP PATTERN: the checker must exit 1 and say PATTERN.
expect_fail() {
	local out rc
	out=$(sim_check "$2" --max-report 100000)
	rc=$?
	[ "$rc" -eq 1 ] || { echo "$out"; fail "$1: checker exit $rc, want 1"; }
	grep -q -- "$3" <<<"$out" || { echo "$out"; fail "$1: no '$3' in report"; }
	pass "$1: rejected ($(head -n 1 <<<"$out" | cut -d: -f2-3))"
}

# Before any SM: ports are Initialize, LIDs are 0.
sim_dump "$SIM_TMP/pre" || fail "diags failed before the SM ran"
expect_fail "before SM, states" "$SIM_TMP/pre" "is Initialize/LinkUp, not Active"
expect_fail "before SM, LIDs" "$SIM_TMP/pre" "has no LID"

export OSM_CACHE_DIR="$SIM_TMP" OSM_TMP_DIR="$SIM_TMP"
on_host H-0 opensm -o -F /dev/null -f "$SIM_TMP/opensm.log" \
	>"$SIM_TMP/opensm.out" 2>&1 || fail "opensm -o failed"

sim_dump "$SIM_TMP/post" || fail "diags failed after the SM ran"
out=$(sim_check "$SIM_TMP/post") || { echo "$out"; fail "checker rejects OpenSM's subnet"; }
grep -q "ca_ports=17 " <<<"$out" || { echo "$out"; fail "expected 17 CA ports"; }
pass "after opensm -o: accepted (${out#check_fabric: OK: })"

# corrupt NAME EDIT...: copy the post dump to NAME.* and apply EDITs to
# NAME.lfts.  An EDIT is "SWITCH LID PORT" (PORT "-" deletes the entry);
# SWITCH is a node description, LID may be "H-n" (that host's port 1 LID).
corrupt() {
	local name=$1
	shift
	cp "$SIM_TMP/post.topo" "$SIM_TMP/$name.topo"
	cp "$SIM_TMP/post.links" "$SIM_TMP/$name.links"
	python3 - "$SIM_TMP/post.topo" "$SIM_TMP/post.lfts" \
		"$SIM_TMP/$name.lfts" "$@" <<'EOF' || fail "corrupt $name: edit failed"
import re, sys
topo, src, dst = sys.argv[1:4]
edits = [e.split() for e in sys.argv[4:]]
lids, node = {}, None
for line in open(topo):
    m = re.match(r'^Ca\s+\d+\s+"[^"]+"\s+#\s+"([^"]+)"', line)
    if m:
        node = m.group(1)
    m = re.match(r'^\[1\].*#\s+lid\s+(\d+)', line)
    if m and node:
        lids[node] = int(m.group(1))
        node = None
out, sw, done = [], None, 0
for line in open(src):
    m = re.match(r'^Unicast lids .*\((.*)\):', line)
    if m:
        sw = m.group(1)
    m = re.match(r'^0x([0-9a-f]+) (\d+)', line)
    if m:
        for s, lid, port in edits:
            lid = lids[lid] if lid in lids else int(lid, 0)
            if s == sw and int(m.group(1), 16) == lid:
                done += 1
                line = None if port == "-" else "0x%04x %03d \n" % (lid, int(port))
                break
    if line is not None:
        out.append(line)
if done != len(edits):
    sys.exit("only %d of %d edits applied" % (done, len(edits)))
open(dst, "w").writelines(out)
EOF
}

# radix 8 tree: 4 hosts on leaf ports 1-4, spines on leaf ports 5-8;
# a spine's port N+1 goes to leaf N.  H-1 hangs on L0-S0 port 2.
corrupt wrong_port "L0-S0 H-0 2"
expect_fail "LFT sends H-0's LID to H-1" "$SIM_TMP/wrong_port" "leads to H-1"

corrupt loop "L1-S0 H-0 2" "L0-S1 H-0 5"
expect_fail "LFT loop L0-S1 <-> L1-S0" "$SIM_TMP/loop" "loop through"

corrupt hole "L0-S0 H-5 -"
expect_fail "LFT hole" "$SIM_TMP/hole" "no LFT entry"

# A spine entry that no CA route uses is still checked (switch sources).
corrupt spine_hole "L1-S3 H-15 -"
expect_fail "LFT hole at a spine" "$SIM_TMP/spine_hole" "no LFT entry"

corrupt dead_end "L0-S3 H-0 0"
expect_fail "LFT to port 0 of a wrong switch" "$SIM_TMP/dead_end" \
	"not this switch's"

pass "check_fabric.py verified against OpenSM"
