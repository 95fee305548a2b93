#!/bin/bash
# The picture of the fabric.  Offline: `ibsmd --offline --dot` of the
# 324-host two-level tree renders with Graphviz `dot -Tsvg` without a
# message, its 18 leaves' hosts folded ("L0-S3: 18 hosts"), switches in two
# rank=same rows; its routes per link, and those of an irregular fabric
# routed by minhop, equal link_loads.py's on ibsmd's own dumps.  Under
# ibsim (demo fabric): `ibsmctl topology` text, --json and --dot answer;
# the JSON's links up are ibnetdiscover's and its routes per link equal
# link_loads.py's on the switches' tables read by dump_fts; after Unlink of
# a leaf-spine link and the heavy sweep it causes, the link is no longer up
# and the routes per link are again dump_fts's.
. "$(dirname "$0")/common.sh"

command -v dot >/dev/null || fail "graphviz (dot) missing: make deps"
LOADS="$SIM_ROOT/tests/sim/link_loads.py"
TLOADS="$SIM_ROOT/tests/sim/topo_loads.py"

# offline_dot NET [ibsmd options]: $SIM_TMP/off.{dot,topo,lfts,pl}, compared
offline_dot() {
	local net=$1
	shift
	"$IBSMD" --offline "$net" "$@" --dot "$SIM_TMP/off.dot" --dump-topology "$SIM_TMP/off.topo" \
		--dump-lfts "$SIM_TMP/off.lfts" >"$SIM_TMP/off.out" 2>&1 ||
		fail "ibsmd --offline $net --dot: $(tail -n 3 "$SIM_TMP/off.out")"
	python3 "$LOADS" "$SIM_TMP/off.topo" "$SIM_TMP/off.lfts" --per-link >"$SIM_TMP/off.pl" ||
		fail "link_loads.py on $net"
	python3 "$TLOADS" dot "$SIM_TMP/off.dot" "$SIM_TMP/off.pl" >"$SIM_TMP/off.cmp" ||
		fail "routes per link in the DOT of $net: $(cat "$SIM_TMP/off.cmp")"
}

gen ftree2 --radix 36 -o "$SIM_TMP/t324.net"
offline_dot "$SIM_TMP/t324.net"
dot -Tsvg -o "$SIM_TMP/t324.svg" "$SIM_TMP/off.dot" 2>"$SIM_TMP/dot.err" ||
	fail "dot -Tsvg: $(head -n 3 "$SIM_TMP/dot.err")"
[ ! -s "$SIM_TMP/dot.err" ] || fail "dot -Tsvg said: $(head -n 3 "$SIM_TMP/dot.err")"
grep -q '</svg>' "$SIM_TMP/t324.svg" || fail "no SVG from dot"
folds=$(grep -c 'label="L0-S[0-9]*: 18 hosts"' "$SIM_TMP/off.dot")
rows=$(grep -c 'rank=same' "$SIM_TMP/off.dot")
hosts=$(grep -c '^  h[0-9]* \[' "$SIM_TMP/off.dot")
[ "$folds" -eq 18 ] && [ "$rows" -eq 2 ] && [ "$hosts" -eq 0 ] ||
	fail "324 hosts: $folds folded leaves (18), $rows rank rows (2), $hosts hosts drawn (0)"
grep -q '>L0&#45;S3: 18 hosts</text>' "$SIM_TMP/t324.svg" || fail "the SVG lacks the folded box of L0-S3"
pass "324 hosts: dot -Tsvg renders it silently ($(wc -c <"$SIM_TMP/t324.svg") bytes), 18 leaves folded, 2 rows; $(cat "$SIM_TMP/off.cmp")"

gen irregular --switches 16 --seed 7 -o "$SIM_TMP/irr.net"
offline_dot "$SIM_TMP/irr.net" -R minhop
pass "irregular, minhop: $(cat "$SIM_TMP/off.cmp")"

out=$("$IBSMD" --dot "$SIM_TMP/x.dot" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--dot needs --offline" <<<"$out" || fail "--dot without --offline: exit $rc ($out)"

# ---- a running daemon under ibsim ----
sim_start "$SIM_ROOT/etc/demo.net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
wait_up 20 "$log" "from the daemon"

# live PREFIX: ibsmctl's JSON against infiniband-diags' dump of the fabric
live() {
	local prefix=$1 nlinks
	ctl --json topology >"$prefix.json" || fail "ibsmctl --json topology: $(ctl --json topology 2>&1)"
	sim_dump "$prefix" || fail "infiniband-diags: $(tail -n 3 "$prefix.err")"
	python3 "$LOADS" "$prefix.topo" "$prefix.lfts" --per-link >"$prefix.pl" || fail "link_loads.py on $prefix"
	python3 "$TLOADS" json "$prefix.json" "$prefix.pl" >"$prefix.cmp" ||
		fail "ibsmctl topology's routes per link against dump_fts: $(cat "$prefix.cmp")"
	# every cabled port of ibnetdiscover's output, counted once per link
	nlinks=$(grep -cE '^\[[0-9]+\].*"[SH]-[0-9a-f]+"\[[0-9]+\]' "$prefix.topo")
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
up = [l for l in d["links"] if l["state"] != "failed"]
assert 2 * len(up) == int(sys.argv[2]), "%d link ends up, ibnetdiscover %s" % (2 * len(up), sys.argv[2])
assert all(l["state"] == "active" and l["port_state"] == "Active" for l in up), "a link not Active"
' "$prefix.json" "$nlinks" || fail "ibsmctl --json topology against ibnetdiscover ($prefix)"
}
live "$SIM_TMP/up"
pass "ibsmctl --json topology: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["n_switches"], "switches,", d["n_hosts"], "hosts,", d["n_links"], "links, all Active")' "$SIM_TMP/up.json"); $(cat "$SIM_TMP/up.cmp") against dump_fts"

out=$(ctl topology) || fail "ibsmctl topology: $out"
grep -q '^6 switches, 12 hosts, 20 links (0 failed, 0 degraded); busiest link direction: 18 routes$' <<<"$out" ||
	fail "ibsmctl topology header: $(head -n 1 <<<"$out")"
grep -q '^  "L0-S0"\[4\] -- "L1-S0"\[1\] Active 18/18$' <<<"$out" ||
	fail "ibsmctl topology: no line for L0-S0[4] -- L1-S0[1]: $(grep 'L0-S0' <<<"$out" | head -n 3)"
ctl topology --dot >"$SIM_TMP/live.dot" || fail "ibsmctl topology --dot"
dot -Tsvg -o /dev/null "$SIM_TMP/live.dot" 2>"$SIM_TMP/dot.err" && [ ! -s "$SIM_TMP/dot.err" ] ||
	fail "dot -Tsvg of ibsmctl topology --dot: $(head -n 3 "$SIM_TMP/dot.err")"
python3 "$TLOADS" dot "$SIM_TMP/live.dot" "$SIM_TMP/up.pl" >/dev/null ||
	fail "ibsmctl topology --dot's routes per link: $(python3 "$TLOADS" dot "$SIM_TMP/live.dot" "$SIM_TMP/up.pl")"
ctl --json topology --dot | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["format"] == "dot" and d["text"].startswith("graph fabric {"), d' ||
	fail "ibsmctl --json topology --dot"
out=$(ctl --json topology --bogus 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import json, sys; assert "unknown argument" in json.loads(sys.argv[1])["error"]' "$out" ||
	fail "ibsmctl --json topology --bogus: exit $rc ($out)"
pass "ibsmctl topology: text, --dot (rendered, routes per link as dump_fts's), --json --dot; a bad argument refused in JSON"

# the routes per link are counted on a worker thread, the reply deferred:
# 8 clients at once each get the whole document, the same one, and a
# status asked meanwhile is answered
pids=()
for i in 1 2 3 4 5 6 7 8; do
	ctl --json topology >"$SIM_TMP/par.$i.json" &
	pids+=($!)
done
ctl --json status >"$SIM_TMP/par.status" || fail "ibsmctl status beside 8 topology requests"
for p in "${pids[@]}"; do wait "$p" || fail "a topology request of 8 at once failed"; done
for i in 2 3 4 5 6 7 8; do
	cmp -s "$SIM_TMP/par.1.json" "$SIM_TMP/par.$i.json" ||
		fail "8 topology requests at once: answer $i differs from answer 1"
done
python3 "$TLOADS" json "$SIM_TMP/par.1.json" "$SIM_TMP/up.pl" >/dev/null ||
	fail "8 topology requests at once: routes per link differ from dump_fts's"
pass "8 topology requests at once: 8 equal answers (routes per link as dump_fts's), status answered beside them"

n=$(sweeps)
sim_cmd 'Unlink "L0-S2"[4]' >/dev/null
wait_until 10 more_sweeps_than "$n" || fail "no heavy sweep after Unlink of L0-S2[4]"
live "$SIM_TMP/unlinked"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
up = [l for l in d["links"] if l["state"] != "failed"]
assert len(up) == 19 and d["failed_links"] == 1, (len(up), d["failed_links"])
assert not any({l["a"]["desc"], l["b"]["desc"]} == {"L0-S2", "L1-S0"} for l in up)
' "$SIM_TMP/unlinked.json" || fail "after Unlink: L0-S2 -- L1-S0 still up in ibsmctl topology"
pass "Unlink L0-S2[4]: 19 links up (the lost one listed failed: tests/sim/t_links.sh), the routes moved as dump_fts shows ($(cat "$SIM_TMP/unlinked.cmp"))"
