#!/bin/bash
# ibsmctl against a real daemon (on the in-process emulator: no ibsim
# needed): every command ibsmctl(8) documents is carried out (a refusal
# is exit 1, the reason on stderr, with --json also {"error": ...} on
# stdout), never silently accepted; an unknown command stays "unknown
# command".
. "$(dirname "$0")/common.sh"

sock="$SIM_TMP/ctl.sock"
mesh="$SIM_TMP/mesh.net"
gen mesh --x 3 --y 3 -o "$mesh"
"$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -s "$sock" -S "$SIM_TMP/state" \
	>"$SIM_TMP/daemon.out" 2>"$SIM_TMP/daemon.err" &
daemon=$!
bg_register "$daemon"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
up() { grep -q "^subnet up:" "$SIM_TMP/daemon.out" 2>/dev/null; }
wait_until 20 up || fail "the emulated daemon did not come up: $(tail -n 3 "$SIM_TMP/daemon.err")"
ctl status >/dev/null || fail "ibsmctl status: $(ctl status 2>&1)"

# groups: the group database (empty here unless the SM made broadcast
# groups at start); the documented keys and types, the text's header
ctl --json groups | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert set(d) == {"ok", "groups"} and isinstance(d["groups"], list), d
for g in d["groups"]:
    assert set(g) == {"mgid", "mlid", "pkey", "qkey", "mtu", "rate", "sl", "well_known", "members"}, g
    assert len(g["mgid"]) == 39 and g["mgid"].startswith("ff") and 0xC000 <= g["mlid"] <= 0xFFFE, g
    assert g["pkey"].startswith("0x") and len(g["qkey"]) == 10 and isinstance(g["well_known"], bool), g
    for m in g["members"]:
        assert set(m) == {"guid", "lid", "join_state"} and 1 <= m["join_state"] <= 15, m
' || fail "ibsmctl --json groups: $(ctl --json groups 2>&1 | head -c 500)"
[ "$(ctl groups | head -n 1)" = "$(printf '%-39s %-6s %-6s %-10s %4s %4s %2s %s' MGID MLID PKEY QKEY MTU RATE SL MEMBERS)" ] ||
	fail "ibsmctl groups: $(ctl groups 2>&1 | head -n 3)"
out=$(ctl groups extra 2>&1); rc=$?
[ "$rc" -eq 1 ] && [ "$out" = "ibsmctl: groups takes no arguments" ] || fail "groups extra: exit $rc ($out)"
pass "groups answers (text and --json, the documented keys); an argument is refused"

# vm: the registry answers; a create on a fabric without vSwitches is refused
ctl --json vm list | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["ok"] is True and d["vms"] == [], d' ||
	fail "ibsmctl --json vm list: $(ctl --json vm list 2>&1)"
[ "$(ctl vm list)" = "$(printf '%-20s %6s %-18s %-20s %3s %6s %s' NAME LID VGUID HYPERVISOR VF WEIGHT PRESENT)" ] ||
	fail "ibsmctl vm list: $(ctl vm list 2>&1)"
out=$(ctl vm create vm1 --hypervisor H-0 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "^ibsmctl: no hypervisor 'H-0'" <<<"$out" || fail "vm create on no vSwitch: exit $rc ($out)"
out=$(ctl vm create vm1 --hypervisor H-0 --shared-lid 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "^ibsmctl: no hypervisor 'H-0'" <<<"$out" ||
	fail "vm create --shared-lid on no vSwitch: exit $rc ($out)"
out=$(ctl vm migrate vm1 --commit 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "no VM named 'vm1'" <<<"$out" || fail "vm migrate of no VM: exit $rc ($out)"
pass "vm list answers, vm create (also --shared-lid) without a vSwitch refused"

out=$(ctl frobnicate 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "^ibsmctl: unknown command 'frobnicate' (status, topology, lids, routes, groups, metrics, verify, sweep, reroute, reload, subscribers, vm, partitions, forget, perfmgr, health, hotspots, job)$" <<<"$out" ||
	fail "unknown command: exit $rc ($out)"
out=$(ctl --json frobnicate 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import json, sys; assert "unknown command" in json.loads(sys.argv[1])["error"]' "$out" ||
	fail "unknown command --json: exit $rc ($out)"
out=$(ctl status extra 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "status takes no arguments" <<<"$out" || fail "status extra: exit $rc ($out)"
ctl --json status | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["ok"] is True and "state" in d' ||
	fail "ibsmctl --json status"
ctl --json subscribers | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["count"] == 0 and d["subscriptions"] == [], d' ||
	fail "ibsmctl --json subscribers: $(ctl --json subscribers 2>&1)"
pass "unknown commands stay unknown; implemented ones answer (status, subscribers)"

out=$("$IBSMCTL" -s "$SIM_TMP/nosuch.sock" --json status 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import json, sys; assert "nosuch.sock" in json.loads(sys.argv[1])["error"]' "$out" ||
	fail "unreachable daemon --json: exit $rc ($out)"
pass "an unreachable daemon: exit 1, --json error document"

# a routing failure (ftree on a mesh) shows in status until it clears;
# routes and verify say why they have nothing
"$IBSMD" --emulate "$mesh" -R ftree -s "$SIM_TMP/mesh.sock" -S "$SIM_TMP/mstate" \
	>"$SIM_TMP/mesh.out" 2>"$SIM_TMP/mesh.err" &
bg_register $!
mctl() { "$IBSMCTL" -s "$SIM_TMP/mesh.sock" "$@"; }
routing_failed() { grep -q 'no engine could route' "$SIM_TMP/mesh.err" 2>/dev/null; }
wait_until 20 routing_failed || fail "ftree on a mesh did not fail: $(tail -n 3 "$SIM_TMP/mesh.err")"
mctl --json status | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["last_error"]
assert e["kind"] == "routing" and e["message"] == "no engine could route the fabric (tried: ftree)", e
assert [x["kind"] for x in d["errors"]] == ["routing"], d["errors"]' ||
	fail "status after a routing failure: $(mctl --json status | head -c 500)"
out=$(mctl verify 2>&1); rc=$?
[ "$rc" -eq 1 ] && [ "$out" = "ibsmctl: verify: no routes computed yet (the routing failed: see status)" ] ||
	fail "verify with no routes: exit $rc ($out)"
out=$(mctl routes L0-S0 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q 'the routing failed: see status' <<<"$out" || fail "routes with no routes: exit $rc ($out)"
pass "a routing failure: status last_error names it (kind routing); routes and verify refuse, saying why"
