#!/bin/bash
# Metrics under ibsim: `ibsmctl metrics`, HTTP GET /metrics (metrics.listen)
# and the textfile collector's ibsmd.prom (metrics.textfile_dir) all parse
# with Debian's python3-prometheus-client text parser and carry the
# fabric's figures (LIDs in use = the LIDs ibnetdiscover reads, the
# switches and hosts of the net file, sweeps, MADs); garbage HTTP requests
# (random bytes, a huge header, a huge body, a request never finished)
# get a 4xx or a close, other methods than GET 405 (one HTTP does not
# define 501), and they change nothing; a reload moves the
# listener, and one it cannot bind is refused with the old one kept; the
# textfile goes when the daemon stops.
. "$(dirname "$0")/common.sh"

PY=/usr/bin/python3	# Debian's: python3-prometheus-client is installed for it
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
	fail "Debian's python3-prometheus-client is missing (make deps)"
command -v curl >/dev/null || fail "curl is missing (make deps)"
prom() { "$PY" "$SIM_ROOT/tests/sim/prom_check.py" "$@"; }

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 2 --hosts-per-leaf 3 -o "$net"
n_sw=$(grep -c '^Switch' "$net")
n_ca=$(grep -c '^Hca' "$net")
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
tf="$SIM_TMP/textfile"
port=$(free_port)
policy="$SIM_TMP/policy.yaml"
write_policy() {
	printf 'metrics:\n  listen: "%s"\n  textfile_dir: %s\n' "$1" "$tf" >"$policy"
}
write_policy "127.0.0.1:$port"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
url="http://127.0.0.1:$port/metrics"

sim_start "$net"
on_host_bg H-0 "$IBSMD" -c "$policy" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
daemon=$SIM_LAST_PID
wait_up 20 "$log" "from the daemon"
lids_tables "$SIM_TMP/up"
n_lids=$(wc -l <"$SIM_TMP/up.lids")
n_linked=$(grep -c '^\[' "$SIM_TMP/up.topo")	# ports ibnetdiscover sees linked

# value FILE SAMPLE: the value prom_check.py printed for SAMPLE, or "none"
value() { awk -v s="$2" '$1 == s { v = $2 } END { print v == "" ? "none" : v }' "$1"; }
# sane NAME FILE: FILE parses; up, MASTER, sweeps, MADs, LIDs and nodes right
sane() {
	local p="$SIM_TMP/parsed.${2##*/}" v mads
	prom "$2" >"$p" || fail "$1: $(prom "$2" 2>&1 >/dev/null)"
	[ "$(value "$p" ibsmd_up)" = 1 ] || fail "$1: ibsmd_up $(value "$p" ibsmd_up)"
	[ "$(value "$p" 'ibsmd_state{state="MASTER"}')" = 1 ] || fail "$1: not MASTER"
	v=$(value "$p" 'ibsmd_sweeps_total{kind="heavy"}')
	[ "$v" != none ] && [ "$v" -ge 1 ] || fail "$1: heavy sweeps $v"
	mads=$(awk '$1 ~ /^ibsmd_mads_sent_total[{]/ { n += $2 } END { print n + 0 }' "$p")
	[ "$mads" -gt 0 ] || fail "$1: MADs sent $mads"
	grep -q '^ibsmd_mads_sent_total{attribute="NodeInfo"} [1-9]' "$p" || fail "$1: no NodeInfo MADs"
	[ "$(value "$p" ibsmd_lids_in_use)" = "$n_lids" ] ||
		fail "$1: LIDs in use $(value "$p" ibsmd_lids_in_use), ibnetdiscover reads $n_lids"
	[ "$(value "$p" 'ibsmd_nodes{type="switch"}')" = "$n_sw" ] &&
		[ "$(value "$p" 'ibsmd_nodes{type="ca"}')" = "$n_ca" ] ||
		fail "$1: nodes $(grep ibsmd_nodes "$p" | tr '\n' ' '), the net file has $n_sw switches, $n_ca hosts"
	[ "$(value "$p" 'ibsmd_ports{state="active"}')" = "$n_linked" ] ||
		fail "$1: active ports $(value "$p" 'ibsmd_ports{state="active"}'), ibnetdiscover sees $n_linked linked"
}

ctl metrics >"$SIM_TMP/ctl.prom" || fail "ibsmctl metrics: $(ctl metrics 2>&1 | head -n 3)"
sane "ibsmctl metrics" "$SIM_TMP/ctl.prom"
ctl --json metrics | "$PY" -c 'import json, sys; d = json.load(sys.stdin); assert d["ok"] is True; sys.stdout.write(d["text"])' \
	>"$SIM_TMP/json.prom" || fail "ibsmctl --json metrics: $(ctl --json metrics 2>&1 | head -c 300)"
sane "ibsmctl --json metrics" "$SIM_TMP/json.prom"
curl -sS -D "$SIM_TMP/http.hdr" -o "$SIM_TMP/http.prom" "$url" || fail "curl $url"
grep -qi '^content-type: text/plain; version=0.0.4' "$SIM_TMP/http.hdr" ||
	fail "HTTP Content-Type: $(grep -i content-type "$SIM_TMP/http.hdr")"
sane "curl /metrics" "$SIM_TMP/http.prom"
pass "ibsmctl metrics (text and --json) and curl /metrics parse (prometheus_client), $n_lids LIDs, $n_sw switches, $n_ca hosts, $n_linked active ports, $(awk '$1 ~ /^ibsmd_mads_sent_total/ { n += $2 } END { print n }' "$SIM_TMP/parsed.http.prom") MADs"

textfile_ok() { [ -s "$tf/ibsmd.prom" ] && prom "$tf/ibsmd.prom" >/dev/null 2>&1; }
wait_until 5 textfile_ok || fail "no parseable $tf/ibsmd.prom: $(ls "$tf" 2>&1)"
sane "textfile" "$tf/ibsmd.prom"
h0=$(value "$SIM_TMP/parsed.ibsmd.prom" 'ibsmd_sweeps_total{kind="heavy"}')
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep --heavy"
newer() { prom "$tf/ibsmd.prom" >"$tf.now" 2>/dev/null && [ "$(value "$tf.now" 'ibsmd_sweeps_total{kind="heavy"}')" -gt "$h0" ]; }
wait_until 10 newer || fail "ibsmd.prom not rewritten after a heavy sweep (heavy sweeps still $h0)"
ls "$tf" | grep -v '^ibsmd\.prom$' && fail "left in the textfile directory: $(ls "$tf")"
pass "textfile $tf/ibsmd.prom parses, rewritten after a sweep (heavy sweeps $h0 -> $(value "$tf.now" 'ibsmd_sweeps_total{kind="heavy"}')), no temp file left"

# code REQUEST-FILE: what the server answers to raw bytes: the status code,
# or "closed" when it closed without one
raw() {
	"$PY" - "$port" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
try:
    s.sendall(open(sys.argv[2], "rb").read())
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/1.") else "closed")
EOF
}
snapshot() { curl -sS "$url" | "$PY" "$SIM_ROOT/tests/sim/prom_check.py" /dev/stdin |
	grep -E '^ibsmd_(sweeps_total[{]kind="heavy"|mad_sets_total|lids_in_use|state)' >"$1"; }
snapshot "$SIM_TMP/before"
head -c 4096 /dev/urandom >"$SIM_TMP/req.random"
{ printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: '; head -c 70000 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >"$SIM_TMP/req.huge"
printf 'FROB /metrics HTTP/1.1\r\nHost: x\r\n\r\n' >"$SIM_TMP/req.method"
printf 'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' >"$SIM_TMP/req.post"
printf 'GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n' >"$SIM_TMP/req.404"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\nxx' >"$SIM_TMP/req.body"
for r in random huge post 404 body; do
	c=$(raw "$SIM_TMP/req.$r")
	case "$c" in 4[0-9][0-9]|closed) ;; *) fail "garbage request '$r': answer $c" ;; esac
	note "$r: $c"
done
[ "$(raw "$SIM_TMP/req.post")" = 405 ] || fail "POST: not 405"
# a method HTTP does not define: 501, as RFC 9110 section 15.6.2 says (evhttp's answer)
c=$(raw "$SIM_TMP/req.method")
[ "$c" = 501 ] || fail "unknown method FROB: answer $c"
[ "$(raw "$SIM_TMP/req.404")" = 404 ] || fail "/nothing: not 404"
# one client that never finishes its request does not hold the others up
exec 7<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /metr' >&7
t0=$(date +%s%N)
curl -sS -m 2 -o /dev/null "$url" || fail "a half-sent request blocks the server"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
exec 7>&-
ctl status >/dev/null || fail "ibsmctl status after the garbage"
snapshot "$SIM_TMP/after"
[ "$(wc -l <"$SIM_TMP/before")" -eq 7 ] || fail "snapshot: $(cat "$SIM_TMP/before")"
diff "$SIM_TMP/before" "$SIM_TMP/after" >&2 || fail "the garbage changed the daemon's figures"
pass "garbage HTTP (random bytes, 70 KB header, 100 MB body) gets 4xx or a close, POST 405, FROB 501; a stalled client does not hold up another scrape (${ms} ms); heavy sweeps, Sets, LIDs and state unchanged"

# reload: a new address moves the listener; one that cannot be bound is refused
port2=$(free_port)
write_policy "127.0.0.1:$port2"
ctl reload >/dev/null || fail "reload with metrics.listen 127.0.0.1:$port2: $(ctl reload 2>&1)"
curl -sS -m 2 -o /dev/null "http://127.0.0.1:$port2/metrics" || fail "nothing serves on $port2 after the reload"
curl -s -m 2 -o /dev/null "$url" && fail "the old address $port still serves after the reload"
write_policy "192.0.2.1:$port"
out=$(ctl reload 2>&1) && fail "a reload to an address not of this host was accepted: $out"
grep -q "cannot listen on 192.0.2.1:$port" <<<"$out" || fail "reload refused, but: $out"
curl -sS -m 2 -o /dev/null "http://127.0.0.1:$port2/metrics" || fail "the refused reload stopped the old listener"
pass "reload moves the listener ($port -> $port2); an unbindable address is refused ($out) and $port2 keeps serving"

# a daemon that stops takes its textfile along: node_exporter exports no stale figures
[ -s "$tf/ibsmd.prom" ] || fail "no $tf/ibsmd.prom before the stop"
kill -TERM "$daemon"
wait_pid "$daemon" 5 || fail "ibsmd did not stop on SIGTERM"
[ -e "$tf/ibsmd.prom" ] && fail "$tf/ibsmd.prom left behind by the stopped daemon"
pass "SIGTERM: the daemon's ibsmd.prom removed"
