#!/bin/bash
# Rogue SMs (sm/rogue.h, sm/smkey.h), judged from hosts with
# infiniband-diags (sminfo, smpquery pkeys, ibportstate) on a 2-level tree
# with one tenant partition:
#  (a) a host's SMInfo Get to ibsmd (madsend smkey) reads SM_Key 0, not
#      the key (IBA vol. 1 §14.4.1);
#  (b) a port that answers SMInfo as MASTER at priority 15 with another
#      SM_Key (madsend rogue) is never obeyed: ibsmd stays MASTER, says so
#      in its log and `ibsmctl status`, and disables the switch port that
#      faces it (sm.rogue: isolate, the default);
#  (c) OpenSM as the rogue (priority 0, sm_key 0xbad): cut off before it
#      writes anything -- the tenant hosts' P_Key tables stay as ibsmd set
#      them, `sminfo` keeps naming ibsmd; `ibportstate ... enable` brings
#      the port back once OpenSM is stopped.
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
MADSEND="$SIM_ROOT/build/madsend"
[ -x "$MADSEND" ] || fail "build/madsend is missing: run make"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
KEY=0x00005ec7e75ec7e7
I=H-0	# ibsmd
F=H-7	# the fake rogue
O=H-9	# OpenSM
pol="$SIM_TMP/ibsmd.yaml"
log="$SIM_TMP/ibsmd.log"
sock="$SIM_TMP/ibsmd.sock"
cat >"$pol" <<EOF
sm: {priority: 0, sm_key: $KEY}
sweep: {interval_s: 1}
default_partition: {membership: limited}
partitions:
  - name: tenant
    pkey: 0x0001
    members: ["H-1", "H-2"]
EOF
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
state_is() { ctl status 2>/dev/null | grep -q "^state: $1\$"; }
pkeys() {	# HOST: the first entries of its port's P_Key table
	on_host "$1" smpquery -D pkeys 0 2>&1 | sed -n 's/^ *0: *//p' | tr -s ' ' | cut -d' ' -f1-4
}
# rogue FIELD GUID: a field of the rogue GUID in ibsmctl --json status
rogue() {
	ctl --json status | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("rogue_sms", []):
    if r["guid"] == sys.argv[2]:
        v = r.get(sys.argv[1]); print(str(v).lower() if isinstance(v, bool) else v)' "$1" "$2"
}
# phys SWITCH_GUID PORT: the switch port's PhysLinkState, read from H-5
phys() {
	on_host H-5 ibportstate -G "$1" "$2" 2>&1 | sed -n 's/^PhysLinkState:\.*//p'
}

sim_start "$net"
on_host_bg "$I" "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 20 "$log"
wait_until 5 sminfo_master "$I" || fail "sminfo does not name ibsmd: $(on_host H-5 sminfo 2>&1)"
tenant=$(pkeys H-1)
[ "$tenant" = "0x7fff 0x8001 0x0000 0x0000" ] || fail "H-1's P_Keys before: '$tenant'"

# ---- (a) the key is not for hosts ----
ilid=$(on_host H-5 sminfo 2>&1 | sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p')
out=$(on_host H-5 "$MADSEND" smkey "$ilid") || fail "madsend smkey: $out"
grep -q '^sm_key=0x0000000000000000 state=3$' <<<"$out" || fail "a host read SMInfo: $out (our key is $KEY)"
pass "(a) a host's SMInfo Get to ibsmd: $out"

# ---- (b) a fake master of another key ----
on_host_bg "$F" "$MADSEND" rogue 8 0xbad >"$SIM_TMP/rogue.out" 2>&1
RPID=$SIM_LAST_PID
wait_until 10 grep -q "SM_Key mismatch: SM $(host_guid "$F")" "$log" ||
	fail "the fake master was not seen: $(tail -n 3 "$log")"
sleep 2
state_is MASTER || fail "ibsmd left MASTER for a master of another key: $(tail -n 4 "$log")"
sminfo_master "$I" || fail "sminfo: $(on_host H-5 sminfo 2>&1)"
grep -q "rogue SM $(host_guid "$F") cut off" "$log" ||
	fail "no rogue cut off: $(grep -i 'rogue\|mismatch' "$log" | tail -n 3)"
grep -q "\[warn\]: rogue SM $(host_guid "$F"): SMInfo MASTER, priority 15, SM_Key 0x0000000000000bad not ours" "$log" ||
	fail "the rogue warning: $(grep -i rogue "$log" | head -n 2)"
sw=$(rogue switch_guid "$(host_guid "$F")")
port=$(rogue switch_port "$(host_guid "$F")")
[ "$(rogue isolated "$(host_guid "$F")")" = true ] || fail "status: $(ctl --json status | head -c 800)"
[ "$(phys "$sw" "$port")" = Disabled ] || fail "switch $sw port $port: $(on_host H-5 ibportstate -G "$sw" "$port" 2>&1 | tail -n 4)"
wait_pid "$RPID" 15
pass "(b) fake master 0xbad at priority 15 on $F: ibsmd MASTER, switch $sw port $port $(phys "$sw" "$port"), isolated $(rogue isolated "$(host_guid "$F")") in ibsmctl status"

# ---- (c) OpenSM as the rogue ----
opensm -c "$SIM_TMP/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i 's/^sm_key .*/sm_key 0x0000000000000bad/' "$SIM_TMP/opensm.conf"
mkdir -p "$SIM_TMP/osm"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg "$O" opensm -F "$SIM_TMP/opensm.conf" -p 0 -f "$SIM_TMP/osm.log" >"$SIM_TMP/osm.out" 2>&1
OPID=$SIM_LAST_PID
wait_until 10 grep -q "SM_Key mismatch: SM $(host_guid "$O")" "$log" ||
	fail "OpenSM was not seen: $(tail -n 3 "$log")"
sleep 5
state_is MASTER || fail "ibsmd left MASTER for OpenSM: $(tail -n 4 "$log")"
sminfo_master "$I" || fail "sminfo: $(on_host H-5 sminfo 2>&1)"
for h in H-1 H-2; do
	got=$(pkeys $h)
	[ "$got" = "$tenant" ] || fail "$h's P_Keys after OpenSM: '$got', were '$tenant'"
done
grep -q "rogue SM $(host_guid "$O") cut off" "$log" ||
	fail "OpenSM not cut off: $(grep -i 'rogue\|mismatch' "$log" | tail -n 3)"
osw=$(rogue switch_guid "$(host_guid "$O")")
oport=$(rogue switch_port "$(host_guid "$O")")
[ "$(phys "$osw" "$oport")" = Disabled ] || fail "OpenSM's switch port: $(phys "$osw" "$oport")"
kill -TERM "$OPID" 2>/dev/null
wait_pid "$OPID" 10 || fail "opensm did not stop"
on_host H-5 ibportstate -G "$osw" "$oport" enable >/dev/null 2>&1 || fail "ibportstate enable"
[ "$(phys "$osw" "$oport")" = Polling ] || fail "ibportstate enable: $(phys "$osw" "$oport")"
# ibsim trains no link: a port enabled from Disabled stays Polling until
# its cable is plugged again (DEVELOPERS.md)
sim_cmd "Unlink \"$O\"[1]" >/dev/null
sim_cmd "ReLink \"$O\"[1]" >/dev/null
active() { on_host "$O" smpquery -D portinfo 0 2>/dev/null | grep -q '^LinkState:\.*Active'; }
wait_until 10 active || fail "$O's port did not come back: $(on_host "$O" smpquery -D portinfo 0 2>&1 | grep State)"
state_is MASTER || fail "ibsmd left MASTER: $(tail -n 4 "$log")"
pass "(c) OpenSM (priority 0, sm_key 0xbad) on $O: cut off, ibsmd MASTER, H-1/H-2 P_Keys '$(pkeys H-1)' kept; $O Active again after ibportstate enable once OpenSM stopped"
