#!/bin/bash
# The performance manager under ibsim (sm/perfmgr.c; ibsmd(8) PERFORMANCE
# MANAGER): ibsim's PMAs answer ClassPortInfo, PortCounters and
# PortCountersExtended.  After the console sets an error counter on one
# switch port and on one CA port (PerformanceSet), within two intervals
# `ibsmctl --json health` names exactly those two ports with the values
# perfquery reads, ibqueryerrors (infiniband-diags) reports the same ports,
# the log has one line each, events.exec ran once each with the documented
# variables, and a Prometheus server scraping /metrics answers a PromQL
# query with the series and its node and port labels.  Clearing the
# counters (as ibclearerrors would) makes both healthy again after the
# next interval, again one log line and one event each.  Interval 2 s.
. "$(dirname "$0")/common.sh"

command -v prometheus >/dev/null || fail "Debian's prometheus is missing (make deps)"
command -v curl >/dev/null || fail "curl is missing (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 2 --hosts-per-leaf 3 -o "$net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
ev="$SIM_TMP/events"
mkdir -p "$ev"
hook="$SIM_TMP/hook.sh"
cat >"$hook" <<EOF
#!/bin/sh
env | grep '^IBSM_' | sort >"$ev/\$IBSM_SEQ.\$1"
EOF
chmod +x "$hook"
port=$(free_port)
pol="$SIM_TMP/policy.yaml"
cat >"$pol" <<EOF
perfmgr:
  interval_s: 2
events:
  exec: $hook
http:
  listen: "127.0.0.1:$port"
EOF
"$IBSMD" -n -c "$pol" >/dev/null || fail "the policy is refused: $("$IBSMD" -n -c "$pol" 2>&1)"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
pm_sweeps() { grep -c 'perfmgr: sweep of' "$log"; }

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 20 "$log"
wait_until 6 eval '[ "$(pm_sweeps)" -ge 1 ]' || fail "no perfmgr sweep: $(grep perfmgr "$log" | tail -n 3)"
ctl --json health >"$SIM_TMP/h0.json" || fail "ibsmctl health: $(cat "$SIM_TMP/h0.json")"
python3 - "$SIM_TMP/h0.json" <<'EOF' || fail "a fresh fabric is not healthy: $(cat "$SIM_TMP/h0.json")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["unhealthy"] == [] and h["flapping"] == [], h
EOF
line=$(grep 'perfmgr: sweep of' "$log" | tail -n 1)
pass "swept: ${line#*perfmgr: }"

# a spine's port 1 (facing a leaf) and a host's port
sw=L1-S0; swp=1; ca=H-4
sim_cmd "PerformanceSet \"$sw\"[$swp] PortCounters.SymbolErrorCounter=50" >/dev/null
sim_cmd "PerformanceSet \"$ca\"[1] PortCounters.PortRcvErrors=20" >/dev/null
sim_cmd "PerformanceSet \"$ca\"[1] PortCounters.LinkErrorRecoveryCounter=3" >/dev/null
n=$(pm_sweeps)
wait_until 5 eval '[ "$(pm_sweeps)" -ge $((n + 2)) ]' || fail "two more sweeps did not come"
ctl --json health >"$SIM_TMP/h1.json" || fail "ibsmctl health: $(cat "$SIM_TMP/h1.json")"

# infiniband-diags' view: perfquery of both ports, ibqueryerrors of the fabric
sim_dump "$SIM_TMP/d" || fail "infiniband-diags: $(tail -n 3 "$SIM_TMP/d.err")"
lid_of() { awk -v n="\"$1\"" '$0 ~ /^(Switch|Ca)/ && index($0, n) { for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' "$SIM_TMP/d.topo"; }
swlid=$(lid_of "$sw")
calid=$(awk '/^Ca/ && /"H-4"/ { getline; for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' "$SIM_TMP/d.topo")
[ -n "$swlid" ] && [ -n "$calid" ] || fail "no LIDs of $sw and $ca in ibnetdiscover's output"
on_host H-0 perfquery "$swlid" "$swp" >"$SIM_TMP/pq_sw.txt" 2>&1 || fail "perfquery $swlid $swp: $(cat "$SIM_TMP/pq_sw.txt")"
on_host H-0 perfquery "$calid" 1 >"$SIM_TMP/pq_ca.txt" 2>&1 || fail "perfquery $calid 1: $(cat "$SIM_TMP/pq_ca.txt")"
on_host H-0 ibqueryerrors >"$SIM_TMP/iqe.txt" 2>&1 || true
python3 - "$SIM_TMP/h1.json" "$SIM_TMP/pq_sw.txt" "$SIM_TMP/pq_ca.txt" "$SIM_TMP/iqe.txt" "$sw" "$swp" "$ca" <<'EOF' || fail "health against perfquery and ibqueryerrors: see above"
import json, re, sys
h = json.load(open(sys.argv[1]))
sw, swp, ca = sys.argv[5], int(sys.argv[6]), sys.argv[7]
def pq(path):
    out = {}
    for l in open(path):
        m = re.match(r'^(\w+):\.+(\d+)$', l.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out
errors = {"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
          "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
          "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
          "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped"}
want = {(sw, swp): pq(sys.argv[2]), (ca, 1): pq(sys.argv[3])}
got = {(u["node"], u["port"]): u for u in h["unhealthy"]}
if set(got) != set(want):
    sys.exit("unhealthy %s, want exactly %s" % (sorted(got), sorted(want)))
for k, p in want.items():
    nz = {c: v for c, v in p.items() if c in errors and v}
    if got[k]["counters"] != nz:
        sys.exit("%s: health says %s, perfquery %s" % (k, got[k]["counters"], nz))
    if not got[k]["reasons"]:
        sys.exit("%s: no reasons" % (k,))
# ibqueryerrors: the ports it names, by node name and port
names, node = set(), None
for l in open(sys.argv[4]):
    m = re.match(r'^Errors for .*"([^"]+)"', l)
    if m:
        node = m.group(1)
        continue
    m = re.match(r'^\s+GUID 0x[0-9a-f]+ port (\d+):', l)
    if m and node:
        names.add((node, int(m.group(1))))
if names != set(want):
    sys.exit("ibqueryerrors reports %s, health %s:\n%s" % (sorted(names), sorted(want), open(sys.argv[4]).read()))
print("health = perfquery = ibqueryerrors:", sorted(want))
EOF
pass "health names exactly $sw[$swp] and $ca[1] with perfquery's values; ibqueryerrors reports the same ports"

[ "$(grep -c 'perfmgr: .* unhealthy:' "$log")" = 2 ] || fail "log lines: $(grep 'unhealthy' "$log")"
grep -q "perfmgr: $sw port $swp .*unhealthy: SymbolErrorCounter" "$log" || fail "the switch port's line: $(grep 'unhealthy' "$log")"
pass "one log line each: $(grep "perfmgr: $ca port 1" "$log" | sed 's/.*perfmgr: //')"

python3 - "$ev" "$sw" "$swp" "$ca" port_unhealthy <<'EOF' || fail "the event hook"
import os, sys
d, sw, swp, ca, kind = sys.argv[1:6]
runs = []
for f in sorted(os.listdir(d)):
    if f.endswith("." + kind):
        env = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(d, f)) if "=" in l)
        runs.append(env)
got = sorted((e["IBSM_NODE"], e["IBSM_PORT"]) for e in runs)
want = sorted([(sw, swp), (ca, "1")])
assert got == want, (got, want)
for e in runs:
    for v in ("IBSM_EVENT", "IBSM_TIME", "IBSM_NODE_GUID", "IBSM_REMOTE_GUID",
              "IBSM_REMOTE_NODE", "IBSM_REMOTE_PORT", "IBSM_REASON", "IBSM_COUNTERS"):
        assert e.get(v), (v, e)
    assert e["IBSM_EVENT"] == kind, e
print(kind, "ran once each:", got)
EOF
pass "events.exec ran once for each port with the documented variables"

# Prometheus: a real server scrapes the listener, PromQL finds the series
pport=$(free_port)
cat >"$SIM_TMP/prom.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: ibsmd
    static_configs: [{targets: ['127.0.0.1:$port']}]
EOF
prometheus --config.file="$SIM_TMP/prom.yml" --storage.tsdb.path="$SIM_TMP/prom" \
	--web.listen-address="127.0.0.1:$pport" >"$SIM_TMP/prom.log" 2>&1 &
bg_register $!
q() { curl -s -m 2 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
found() { q "ibsmd_port_symbol_errors_total{node=\"$sw\",port=\"$swp\"}" | grep -q '"value":\[[0-9.]*,"50"\]'; }
wait_until 20 found || fail "Prometheus: $(q "ibsmd_port_symbol_errors_total{node=\"$sw\"}"; tail -n 3 "$SIM_TMP/prom.log")"
res=$(q "ibsmd_port_rcv_errors_total{node=\"$ca\",port=\"1\"}")
grep -q '"value":\[[0-9.]*,"20"\]' <<<"$res" && grep -q '"remote_guid":"0x' <<<"$res" ||
	fail "Prometheus: $res"
pass "Prometheus' PromQL returns the series with node, port and remote labels"

# cleared, as ibclearerrors would: healthy again after the next interval
sim_cmd "PerformanceSet \"$sw\"[$swp] PortCounters.SymbolErrorCounter=0" >/dev/null
sim_cmd "PerformanceSet \"$ca\"[1] PortCounters.PortRcvErrors=0" >/dev/null
sim_cmd "PerformanceSet \"$ca\"[1] PortCounters.LinkErrorRecoveryCounter=0" >/dev/null
n=$(pm_sweeps)
wait_until 5 eval '[ "$(pm_sweeps)" -ge $((n + 2)) ]' || fail "two more sweeps did not come"
ctl --json health >"$SIM_TMP/h2.json"
python3 -c 'import json,sys; h = json.load(open(sys.argv[1])); assert h["unhealthy"] == [], h["unhealthy"]' "$SIM_TMP/h2.json" ||
	fail "still unhealthy after the clear: $(cat "$SIM_TMP/h2.json")"
[ "$(grep -c 'perfmgr: .* healthy again' "$log")" = 2 ] || fail "recovery lines: $(grep 'healthy again' "$log")"
[ "$(ls "$ev" | grep -c '\.port_recovered$')" = 2 ] || fail "recovery events: $(ls "$ev")"
pass "cleared counters: both healthy again, one line and one event each"
