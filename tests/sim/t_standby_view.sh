#!/bin/bash
# A standby's words: ibsmd "lo" (priority 5) configures the subnet, then
# "hi" (priority 10) takes it over.  lo, now STANDBY, answers topology and
# partitions from its time as master and says so ("as of <ISO time>, as
# master" in the text, "as_of" in the JSON), and refuses `sweep` and
# `sweep --heavy`, naming the master's LID (sminfo from a host gives the
# same LID).
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
sim_start "$net"

start_sm() {	# start_sm NAME HOST PRIORITY
	printf 'sm: {priority: %s, poll_ms: 500, poll_retries: 2}\n' "$3" >"$SIM_TMP/$1.yaml"
	on_host_bg "$2" "$IBSMD" -S "$SIM_TMP/$1.state" -s "$SIM_TMP/$1.sock" \
		-c "$SIM_TMP/$1.yaml" >"$SIM_TMP/$1.log" 2>&1
}
ctl() { local n=$1; shift; "$IBSMCTL" -s "$SIM_TMP/$n.sock" "$@"; }
state_is() { ctl "$1" status 2>/dev/null | grep -q "^state: $2\$"; }

start_sm lo H-2 5
wait_up 20 "$SIM_TMP/lo.log" "from lo"
ctl lo --json topology | python3 -c 'import json, sys; assert "as_of" not in json.load(sys.stdin)' ||
	fail "the master's topology says as_of"
start_sm hi H-9 10
wait_until 20 state_is hi MASTER || fail "hi is not MASTER: $(tail -n 3 "$SIM_TMP/hi.log")"
wait_until 10 state_is lo STANDBY || fail "lo is not STANDBY: $(tail -n 3 "$SIM_TMP/lo.log")"
wait_up 20 "$SIM_TMP/hi.log" "from hi"

out=$(ctl lo topology) || fail "lo topology: $out"
head -n 1 <<<"$out" | grep -Eq '^as of 20[0-9-]+T[0-9:]+Z, as master$' ||
	fail "lo's topology does not say how old it is: $(head -n 1 <<<"$out")"
ctl lo --json topology | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["as_of"].endswith("Z"), d.get("as_of")' ||
	fail "lo's --json topology has no as_of"
out=$(ctl lo partitions) || fail "lo partitions: $out"
head -n 1 <<<"$out" | grep -Eq '^as of 20[0-9-]+T[0-9:]+Z, as master$' ||
	fail "lo's partitions do not say how old they are: $(head -n 1 <<<"$out")"
ctl lo --json partitions | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["as_of"].endswith("Z")' ||
	fail "lo's --json partitions has no as_of"
pass "STANDBY: topology and partitions say '$(head -n 1 <<<"$out")' (text) and as_of (JSON)"

mlid=$(on_host H-5 sminfo 2>/dev/null | sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p')
[ -n "$mlid" ] || fail "sminfo gives no master LID: $(on_host H-5 sminfo 2>&1)"
for args in "sweep" "sweep --heavy"; do
	out=$(ctl lo --json $args 2>/dev/null); rc=$?
	[ "$rc" -eq 1 ] || fail "lo: $args answered in STANDBY: $out"
	python3 -c 'import json, sys; e = json.loads(sys.argv[1])["error"]; assert "STANDBY" in e and "at LID %s " % sys.argv[2] in e, e' "$out" "$mlid" ||
		fail "lo: $args refused without the master's LID $mlid: $out"
done
pass "STANDBY: sweep and sweep --heavy refused: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["error"])' "$out") (sminfo: master LID $mlid)"
