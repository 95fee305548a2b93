#!/bin/bash
# Shared-LID VMs and Paper VI signalling under ibsim:
# a fabric of 8 hypervisors (fabgen hyper: 4 leaves x 2), ibsmd on the plain
# host H-0, and on each hypervisor's PF `ibsm-listen --hypervisor` with 4
# --vguid: it subscribes to 69 (registering the hypervisor) and Sets its
# vGUIDs with SA GUIDInfoRecord, which makes 32 shared-LID VMs in the
# registry (`ibsmctl vm list`), each at its PF's LID -- and no notice.
#  - `saquery` PathRecord to a VM's GID gives its PF's LID as DLID;
#  - `ibsmctl vm migrate` of one VM to another hypervisor: its LID becomes
#    the new PF's, no LFT block is written, and exactly 8 mapping-change
#    lines appear (one per listener, with the VM's vguid and new lid), not 32;
#  - a reboot on the same hypervisor (vm destroy, vm create --shared-lid
#    --guid, same hypervisor): no line;
#  - the listeners stop (SIGTERM): each Deletes its vGUIDs that are still
#    on its hypervisor; the registry keeps only the VM moved off P-0-0.
. "$(dirname "$0")/common.sh"
NET="$SIM_TMP/hyper.net"
gen hyper --leaves 4 --hypervisors-per-leaf 2 -o "$NET"
sock="$SIM_TMP/sock"
log="$SIM_TMP/daemon.log"
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
printf 'virtualization: {lid_scheme: dynamic, vswitches: ["V-*"]}\n' >"$SIM_TMP/p.yaml"

sim_start "$NET"
on_host_bg H-0 "$IBSMD" -c "$SIM_TMP/p.yaml" -S "$SIM_TMP/state" -s "$sock" \
	--log-level info >"$log" 2>&1
wait_up 60 "$log"

hyps=()
for l in 0 1 2 3; do for i in 0 1; do hyps+=("$l-$i"); done; done
pids=()
for h in "${hyps[@]}"; do
	args=()
	for k in 1 2 3 4; do
		args+=(--vguid "$(printf '0x0a000000%04x%04x' "$((${h%-*} * 2 + ${h#*-}))" "$k")")
	done
	on_host_bg "P-$h" "$LISTEN" --hypervisor "${args[@]}" --check-interval 1 \
		>"$SIM_TMP/P-$h.out" 2>"$SIM_TMP/P-$h.err"
	pids+=("$SIM_LAST_PID")
done
set_done() { grep -q 'vGUIDs set on this port' "$SIM_TMP/P-$1.err"; }
for h in "${hyps[@]}"; do
	wait_until 30 set_done "$h" ||
		fail "P-$h: vGUIDs not set: $(tail -n 3 "$SIM_TMP/P-$h.err")"
done
nvm() { ctl --json vm list | jq '[.vms[] | select(.shared_lid)] | length'; }
[ "$(nvm)" = 32 ] || fail "vm list: $(ctl vm list)"
mapping_lines() { cat "$SIM_TMP"/P-*.out | grep -c '"vguid"' || true; }
sleep 1
[ "$(mapping_lines)" = 0 ] || fail "creation sent notices: $(cat "$SIM_TMP"/P-*.out)"
pass "8 hypervisors registered, 32 shared-LID VMs set through GUIDInfoRecord: no notice"

vm=vg-0a00000000000001	# on P-0-0
pf_lid() { ctl --json vm list | jq -r --arg n "$1" '.vms[] | select(.name == $n) | .lid'; }
lid0=$(pf_lid "$vm")
vmc() { python3 "$SIM_ROOT/tests/sim/vm_check.py" "$@"; }
sgid=$(vmc gid "$(host_guid H-1)"); gid=$(vmc gid 0x0a00000000000001)
on_host H-1 saquery -p --sgid-to-dgid "$sgid-$gid" >"$SIM_TMP/pr" 2>&1 ||
	fail "saquery PathRecord $sgid -> $gid: $(tail -n 2 "$SIM_TMP/pr")"
dlid=$(sed -n 's/^[[:space:]]*dlid\.*//p' "$SIM_TMP/pr" | head -n 1)
[ "$dlid" = "$lid0" ] || fail "saquery PathRecord to $vm: DLID '$dlid', want its PF's LID $lid0"
pass "saquery: the VM's GID resolves to its PF's LID $lid0"

R=$(ctl --json vm migrate "$vm" --to V-3-1) || fail "vm migrate: $R"
note "vm migrate -> $(jq -c . <<<"$R")"
lid1=$(jq -r .vm.lid <<<"$R")
[ "$lid1" != "$lid0" ] || fail "the LID did not change: $R"
[ "$(jq -r .repath_notices <<<"$R")" = 8 ] || fail "reply: $R"
eight() { [ "$(mapping_lines)" -ge 8 ]; }
wait_until 10 eight
sleep 2		# and no more than 8
n=$(mapping_lines)
[ "$n" = 8 ] || fail "$n mapping lines, want 8: $(cat "$SIM_TMP"/P-*.out)"
for h in "${hyps[@]}"; do
	grep '"vguid"' "$SIM_TMP/P-$h.out" | jq -e --arg g 0x0a00000000000001 --argjson l "$lid1" \
		'select(.trap == 69 and .vguid == $g and .lid == $l)' >/dev/null ||
		fail "P-$h: $(cat "$SIM_TMP/P-$h.out")"
done
# no writes: the reply has no write counts, method none (the emulator test
# test_vm_shared_emu compares every switch's LFT before and after)
jq -e '.method == "none" and (has("lft_blocks") | not)' <<<"$R" >/dev/null ||
	fail "a shared-LID migration wrote: $R"
pass "vm migrate $vm: LID $lid0 -> $lid1, exactly 8 repath notices (one per hypervisor, not 32), each with vguid and lid"

R=$(ctl --json vm destroy vg-0a00000000010002) || fail "vm destroy: $R"
R=$(ctl --json vm create reborn --hypervisor V-0-1 --shared-lid --guid 0x0a00000000010002) ||
	fail "vm create: $R"
[ "$(jq -r .vguid_action <<<"$R")" = same-lid ] || fail "reply: $R"
sleep 2
[ "$(mapping_lines)" = 8 ] || fail "a reboot sent notices: $(cat "$SIM_TMP"/P-*.out)"
pass "a reboot on the same hypervisor: no notice"

for p in "${pids[@]}"; do kill -TERM "$p"; done
for p in "${pids[@]}"; do wait_pid "$p" 10 || fail "a listener did not stop"; done
# each Deletes the vGUIDs it was given that are on its hypervisor: "reborn"
# (P-0-1's vGUID) goes with P-0-1; the VM ibsmctl moved to V-3-1 stays (P-0-0
# no longer holds it, P-3-1 never set it)
left=$(ctl --json vm list | jq -r '[.vms[].name] | join(",")')
[ "$left" = vg-0a00000000000001 ] || fail "after the listeners left, the registry holds: $left"
pass "the listeners Deleted their hypervisors' vGUIDs on exit; only the VM moved away from P-0-0 is left"
