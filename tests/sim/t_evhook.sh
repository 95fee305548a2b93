#!/bin/bash
# The event hook (events.exec, ibsmd(8) "EVENT HOOK").  ibsmd -n takes a
# policy naming an absolute, executable program and refuses a relative
# path and a file that is not executable (78, FILE:LINE:COL).  On the demo
# fabric the program -- a script writing its environment to a file per
# event -- runs once at start-up with master_changed (IBSM_STATE MASTER,
# our port's GUID), then, after the ibsim console's Unlink of the cable
# L0-S2[4], once with link_lost, and after Link puts it back once with
# link_found: the variables name the two ends of the cable as
# ibnetdiscover shows it (node GUIDs, names, ports).  ibsmctl status
# counts the runs and lists the events; a reload takes another program
# and refuses a relative path.  On the emulator, ftree on a mesh
# fails: routing_failed with the reason status gives.
. "$(dirname "$0")/common.sh"

# mkhook DIR: a program writing its environment to DIR/ev.SEQ; its path
mkhook() {
	mkdir -p "$1"
	printf '#!/bin/sh\nenv >"%s/ev.$IBSM_SEQ.tmp" && mv "%s/ev.$IBSM_SEQ.tmp" "%s/ev.$IBSM_SEQ"\n' \
		"$1" "$1" "$1" >"$1.sh"
	chmod 755 "$1.sh"
	echo "$1.sh"
}
evdir="$SIM_TMP/events"
hook=$(mkhook "$evdir")
pol="$SIM_TMP/ibsmd.yaml"
printf 'events:\n  exec: %s\n  exec_timeout_s: 5\n  exec_max: 2\n' "$hook" >"$pol"

# ibsmd -n: the program's path checked where the policy names it
"$IBSMD" -n -c "$pol" >"$SIM_TMP/n.out" 2>&1 || fail "ibsmd -n refuses the policy: $(cat "$SIM_TMP/n.out")"
printf 'events:\n  exec: hook.sh\n' >"$SIM_TMP/rel.yaml"
rc=0; "$IBSMD" -n -c "$SIM_TMP/rel.yaml" >"$SIM_TMP/rel.out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "rel.yaml:2:9: .*not an absolute path" "$SIM_TMP/rel.out" ||
	fail "ibsmd -n on a relative events.exec: status $rc, $(cat "$SIM_TMP/rel.out")"
cp "$hook" "$SIM_TMP/noexec.sh" && chmod 644 "$SIM_TMP/noexec.sh"
printf 'events:\n  exec: %s\n' "$SIM_TMP/noexec.sh" >"$SIM_TMP/noexec.yaml"
rc=0; "$IBSMD" -n -c "$SIM_TMP/noexec.yaml" >"$SIM_TMP/noexec.out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "noexec.yaml:2:9: .*not executable" "$SIM_TMP/noexec.out" ||
	fail "ibsmd -n on a file that is not executable: status $rc, $(cat "$SIM_TMP/noexec.out")"
pass "ibsmd -n: the policy taken; a relative path and a file without x refused: $(cat "$SIM_TMP/rel.out") / $(cat "$SIM_TMP/noexec.out")"

# ev_of EVENT [DIR]: the files of the events named EVENT, in order
ev_of() { grep -lx "IBSM_EVENT=$1" "${2:-$evdir}"/ev.* 2>/dev/null | sort -t. -k2 -n; }
# var FILE NAME: a variable's value in an event's file
var() { sed -n "s/^$2=//p" "$1"; }
have() { [ "$(ev_of "$1" "${2:-$evdir}" | wc -l)" -ge 1 ]; }

# routing_failed: ftree cannot route a mesh (on the emulator, no ibsim)
mesh="$SIM_TMP/mesh.net"
gen mesh --x 3 --y 3 -o "$mesh"
rdir="$SIM_TMP/routing"
printf 'events:\n  exec: %s\n' "$(mkhook "$rdir")" >"$SIM_TMP/mesh.yaml"
"$IBSMD" --emulate "$mesh" -R ftree -c "$SIM_TMP/mesh.yaml" -s "$SIM_TMP/mesh.sock" \
	-S "$SIM_TMP/mstate" >"$SIM_TMP/mesh.out" 2>"$SIM_TMP/mesh.err" &
mesh_pid=$!
bg_register "$mesh_pid"
wait_until 20 have routing_failed "$rdir" ||
	fail "no routing_failed event for ftree on a mesh: $(tail -n 3 "$SIM_TMP/mesh.err")"
f=$(ev_of routing_failed "$rdir" | head -n 1)
why=$(timeout 10 "$IBSMCTL" -s "$SIM_TMP/mesh.sock" --json status |
	python3 -c 'import json, sys; print([e for e in json.load(sys.stdin)["errors"] if e["kind"] == "routing"][0]["message"])') ||
	fail "ibsmctl status: no routing error"
[ "$(var "$f" IBSM_REASON)" = "$why" ] && grep -q 'no engine could route' <<<"$why" ||
	fail "routing_failed: IBSM_REASON '$(var "$f" IBSM_REASON)', status '$why'"
kill "$mesh_pid"
pass "routing_failed (ftree on a 3x3 mesh): IBSM_REASON=$(var "$f" IBSM_REASON)"

sim_start "$SIM_ROOT/etc/demo.net"
sock="$SIM_TMP/ibsmd.sock"
log="$SIM_TMP/daemon.log"
on_host_bg H-0 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" >"$log" 2>&1
wait_up 20 "$log" "from the daemon"

wait_until 10 have master_changed || fail "no master_changed event at start-up: $(ls "$evdir")"
m=$(ev_of master_changed | head -n 1)
me=$(host_guid H-0)
[ "$(var "$m" IBSM_STATE)" = MASTER ] && [ "$(var "$m" IBSM_MASTER_GUID)" = "$me" ] &&
	[ "$(var "$m" IBSM_SM_GUID)" = "$me" ] ||
	fail "master_changed: $(grep IBSM_ "$m" | tr '\n' ' ')"
extra=$(grep -v -E '^(IBSM_[A-Z_]+|PATH|LANG|PWD)=' "$m" | tr '\n' ' ')
[ -z "$extra" ] || fail "the program got more of the daemon's environment: $extra"
pass "start-up: master_changed $(grep -E '^IBSM_(STATE|MASTER_GUID|SEQ)=' "$m" | sort | tr '\n' ' ')"

# ibnetdiscover's view of the cable at L0-S2 port 4
sim_dump "$SIM_TMP/up" || fail "infiniband-diags: $(tail -n 3 "$SIM_TMP/up.err")"
read -r ga pa na gb pb nb < <(python3 - "$SIM_TMP/up.topo" <<'EOF'
import re, sys
guid, name = {}, {}
cur = None
lines = open(sys.argv[1]).read().splitlines()
for l in lines:
    m = re.match(r'^(Switch|Ca|Hca)\s+\d+\s+"([SH]-([0-9a-f]+))"\s+#\s+"([^"]*)"', l)
    if m:
        cur = m.group(2)
        guid[cur] = int(m.group(3), 16)
        name[cur] = m.group(4)
link = None
for l in lines:
    m = re.match(r'^(Switch|Ca|Hca)\s+\d+\s+"([SH]-[0-9a-f]+)"', l)
    if m:
        cur = m.group(2)
    m = re.match(r'^\[(\d+)\]\s+"([SH]-[0-9a-f]+)"\[(\d+)\]', l)
    if m and name.get(cur) == "L0-S2" and m.group(1) == "4":
        link = ((guid[cur], int(m.group(1)), name[cur]),
                (guid[m.group(2)], int(m.group(3)), name[m.group(2)]))
assert link, "no L0-S2 port 4 in ibnetdiscover's output"
a, b = sorted(link)          # the hook names the lower node GUID first
print("0x%016x %d %s 0x%016x %d %s" % (a + b))
EOF
) || fail "ibnetdiscover: no cable at L0-S2[4]"
[ -n "$nb" ] || fail "ibnetdiscover: no cable at L0-S2[4]"
note "ibnetdiscover: \"$na\"[$pa] ($ga) -- \"$nb\"[$pb] ($gb)"

# check_link EVENT: exactly one such event, naming that cable
check_link() {
	local f n
	n=$(ev_of "$1" | wc -l)
	[ "$n" = 1 ] || fail "$n $1 events for one cable"
	f=$(ev_of "$1")
	[ "$(var "$f" IBSM_NODE_GUID)" = "$ga" ] && [ "$(var "$f" IBSM_PORT)" = "$pa" ] &&
		[ "$(var "$f" IBSM_NODE)" = "$na" ] &&
		[ "$(var "$f" IBSM_REMOTE_GUID)" = "$gb" ] &&
		[ "$(var "$f" IBSM_REMOTE_PORT)" = "$pb" ] &&
		[ "$(var "$f" IBSM_REMOTE_NODE)" = "$nb" ] &&
		[ "$(var "$f" IBSM_SM_GUID)" = "$me" ] ||
		fail "$1 does not name ibnetdiscover's cable $ga[$pa] -- $gb[$pb]: $(grep IBSM_ "$f" | tr '\n' ' ')"
	pass "$1: $(grep -E '^IBSM_(NODE|NODE_GUID|PORT|REMOTE_NODE|REMOTE_GUID|REMOTE_PORT|SEQ|TIME)=' "$f" | sort | tr '\n' ' ')"
}

sim_cmd 'Unlink "L0-S2"[4]' >/dev/null
wait_until 15 have link_lost || fail "no link_lost event after Unlink: $(tail -n 3 "$log")"
sleep 1
check_link link_lost
have node_lost && fail "node_lost for a cable between two switches: $(ev_of node_lost)"

out=$(sim_cmd "Link \"$na\"[$pa] \"$nb\"[$pb]")
wait_until 15 have link_found || fail "no link_found event after Link ($out): $(tail -n 3 "$log")"
sleep 1
check_link link_found

timeout 10 "$IBSMCTL" -s "$sock" --json status >"$SIM_TMP/status.json" || fail "ibsmctl status"
python3 - "$SIM_TMP/status.json" "$hook" <<'EOF' || fail "ibsmctl status: events"
import json, sys
e = json.load(open(sys.argv[1]))["events"]
assert e["program"] == sys.argv[2], e["program"]
assert e["runs"] >= 3 and e["failed"] == 0 and e["timeouts"] == 0 and e["dropped"] == 0, e
kinds = [r["event"] for r in e["recent"]]
assert "master_changed" in kinds and kinds.index("link_lost") < kinds.index("link_found"), kinds
lost = e["recent"][kinds.index("link_lost")]
assert lost["vars"]["IBSM_REMOTE_PORT"] and lost["time"].endswith("Z"), lost
EOF
pass "ibsmctl status: events $(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["events"]; print({k: e[k] for k in ("runs", "failed", "timeouts", "dropped", "running")}, [r["event"] for r in e["recent"]])' "$SIM_TMP/status.json")"

# a reload takes another program; one the policy cannot name is refused
hook2=$(mkhook "$SIM_TMP/events2")
printf 'events:\n  exec: %s\n' "$hook2" >"$pol"
timeout 10 "$IBSMCTL" -s "$sock" reload >"$SIM_TMP/reload.out" 2>&1 || fail "ibsmctl reload: $(cat "$SIM_TMP/reload.out")"
[ "$(status_field "$sock" events.program)" = "$hook2" ] ||
	fail "after the reload events.program is $(status_field "$sock" events.program), not $hook2"
printf 'events:\n  exec: events2.sh\n' >"$pol"
rc=0; timeout 10 "$IBSMCTL" -s "$sock" reload >"$SIM_TMP/reload.out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q 'ibsmd.yaml:2:9: events.exec: .*not an absolute path' "$SIM_TMP/reload.out" &&
	[ "$(status_field "$sock" events.program)" = "$hook2" ] ||
	fail "a reload naming a relative events.exec: status $rc, $(cat "$SIM_TMP/reload.out"), program $(status_field "$sock" events.program)"
pass "reload: events.exec $hook2 taken; a relative path refused ($(cat "$SIM_TMP/reload.out")), the program kept"
