#!/bin/bash
# VMs on a fabric of hypervisors (fabgen hyper: 4 leaves, 2 spines, 2
# vSwitches a leaf with a PF and 4 VFs, one plain host a leaf), under both
# LID schemes, judged with infiniband-diags only:
#  - bring-up: the fabric checks out (check_fabric.py) apart from the idle
#    VFs, which under the dynamic scheme are exactly the VFs without a VM
#    and are off the subnet (no LID, or not Active: a VF a VM left may keep
#    its old LID in INIT, never Active beside the VM's new port); under
#    prepopulated every port is on;
#  - `ibsmctl vm create`: `smpquery -L nodeinfo VMLID` from a plain host is
#    answered by the VF's node; every switch's LFT leads the LID there; no
#    other LID's entry changed (prepopulated: no LFT write at all);
#  - `ibsmctl vm migrate` to another leaf: the same smpquery from an
#    unrelated host is answered by the destination VF's node; `saquery`
#    PathRecord for the VM's GID (its vGUID) gives the VM's LID as DLID;
#    every switch's entry for the LID leads to the destination VF (dump_fts,
#    walked hop by hop); no other LID's entry changed, but the swapped LID
#    under prepopulated, which then leads to the source VF;
#  - a migration within a leaf (--prepare, which moves nothing, then
#    --commit; --commit alone is refused): 1 LFT block on one physical
#    switch (dynamic), at most 2 (prepopulated), by the reply and by dump_fts;
#  - a heavy sweep after it writes nothing (summary line) and the dumps are
#    the same before and after;
#  - `vm destroy` (dynamic): the LID is answered by no one.
# T_VM_SCHEMES picks the schemes (default "dynamic prepopulated").
. "$(dirname "$0")/common.sh"
VMCHECK="$SIM_ROOT/tests/sim/vm_check.py"
NET="$SIM_TMP/hyper.net"
gen hyper -o "$NET"

vmc() { python3 "$VMCHECK" "$@"; }

# ups: how many summary lines ibsmd printed
ups() { grep -c '^subnet up' "$DIR/out"; }
ups_over() { [ "$(ups)" -gt "$1" ]; }
last_up() { grep '^subnet up' "$DIR/out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }

ctl() { "$IBSMCTL" -s "$DIR/sock" "$@"; }

# vmfield NAME KEY: a field of NAME's entry in `vm list --json`
vmfield() { ctl --json vm list | jq -r --arg n "$1" ".vms[] | select(.name == \$n) | .$2"; }

# dump PREFIX: infiniband-diags dump; PREFIX.idle = the end ports off the
# subnet (no LID and not Active; one without the other fails); check_fabric.py on the rest; PREFIX.lft (switch LID port entries)
dump() {
	sim_dump "$1" || fail "infiniband-diags could not dump the fabric: $(tail -n 3 "$1.err")"
	vmc idle --topo "$1.topo" --links "$1.links" --out "$1.busy" >"$1.idle" ||
		fail "vm_check.py idle $1"
	python3 "$SIM_CHECK" --topo "$1.busy.topo" --links "$1.busy.links" \
		--lfts "$1.lfts" >"$1.check" 2>&1 || {
		head -n 20 "$1.check" >&2
		fail "$SCHEME: check_fabric.py found problems ($1)"
	}
	python3 "$SIM_ROOT/tests/sim/lft_entries.py" "$1.lfts" >"$1.lft" || fail "lft_entries.py $1"
}

# idle_is PREFIX VF...: the end ports off the subnet are exactly these
idle_is() {
	local want
	want=$(printf '%s\n' "${@:2}" | sed '/^$/d' | sort)
	[ "$(sort "$1.idle")" = "$want" ] ||
		fail "$SCHEME: ports off the subnet (no LID, not Active): $(tr '\n' ' ' <"$1.idle"), expected: $(tr '\n' ' ' <<<"$want")"
}

# all_vfs: every VF's name in the net file
all_vfs() { sed -n 's/^Hca\t1 "\(F-[^"]*\)"$/\1/p' "$NET"; }

# answers LID NAME HOST: `smpquery -L nodeinfo LID` from HOST is answered by
# the node NAME (GUID from the net file, as ibsim gives it)
answers() {
	local guid got
	guid=$(awk -v n="\"$2\"" '/^caguid=/ { g = substr($1, 8) } $1 == "Hca" && $3 == n { print g }' "$NET")
	got=$(on_host "$3" smpquery -L nodeinfo "$1" 2>&1 | sed -n 's/^Guid:\.*//p')
	[ -n "$got" ] && [ $((got)) -eq $((guid)) ]
}

# walks PREFIX LID NAME: every switch's LFT leads LID to the CA NAME
walks() {
	vmc walk --topo "$1.topo" --lfts "$1.lfts" --lid "$2" --expect "$3" >"$1.walk.$2" ||
		fail "$SCHEME: $(head -n 6 "$1.walk.$2")"
}

# same_but A B LID...: A's and B's forwarding entries agree for every LID
# but the ones given
same_but() {
	local a=$1 b=$2 skip
	shift 2
	skip=" $* "
	diff <(awk -v s="$skip" 'index(s, " " $2 " ") == 0' "$a.lft") \
	     <(awk -v s="$skip" 'index(s, " " $2 " ") == 0' "$b.lft") >"$b.diff" ||
		fail "$SCHEME: $(grep -c '^[<>]' "$b.diff") entries of other LIDs than $* changed ($a -> $b): $(head -n 4 "$b.diff" | tr '\n' ' ')"
}

# changed A B LID: the physical switches (GUID) whose entry for LID differs
changed() {
	diff <(awk -v l="$3" '$2 == l' "$1.lft") <(awk -v l="$3" '$2 == l' "$2.lft") |
		sed -n 's/^> \(0x[0-9a-f]*\) .*/\1/p' | sort -u |
		while read -r g; do
			grep -q "^Switch.*\"S-${g#0x}\".*# \"L[0-9]" "$2.topo" && echo "$g"
		done
}

# reply KEY: a key of the last JSON reply ($REPLY_JSON)
reply() { jq -r ".$1 // empty" <<<"$REPLY_JSON"; }

# run CMD...: `ibsmctl --json CMD`; fails on an error
run() {
	REPLY_JSON=$(ctl --json "$@" 2>"$DIR/ctl.err") ||
		fail "$SCHEME: ibsmctl $*: $REPLY_JSON $(cat "$DIR/ctl.err")"
	note "$SCHEME: $* -> $(jq -c . <<<"$REPLY_JSON")"
}

scheme_run() {
	SCHEME=$1
	DIR="$SIM_TMP/$SCHEME"
	mkdir -p "$DIR"
	printf 'virtualization: {lid_scheme: %s, vswitches: ["V-*"]}\n' "$SCHEME" >"$DIR/p.yaml"
	sim_start "$NET"
	on_host_bg H-0 "$IBSMD" -c "$DIR/p.yaml" -S "$DIR/state" -s "$DIR/sock" \
		>"$DIR/out" 2>"$DIR/err"
	local sm=$SIM_LAST_PID lid vf vf2 vf3 guid gid sgid dlid swapped n w
	wait_until 60 ups_over 0 || fail "$SCHEME: ibsmd did not come up: $(tail -n 3 "$DIR/err")"

	# bring-up
	dump "$DIR/0"
	if [ "$SCHEME" = dynamic ]; then
		mapfile -t vfs < <(all_vfs)
		idle_is "$DIR/0" "${vfs[@]}"
	else
		idle_is "$DIR/0"
	fi
	pass "$SCHEME: bring-up checks out ($(wc -l <"$DIR/0.idle") idle VFs off the subnet)"
	# extended_lids auto (the default): ibsim has no XLIDCap, so legacy
	grep -q 'extended LIDs: legacy 16-bit mode: .* lack.* the extension' "$DIR/err" &&
		grep -q 'state=MASTER xlid=legacy vlids=0' "$DIR/out" ||
		fail "$SCHEME: no fallback to legacy LIDs logged: $(grep -i 'extended' "$DIR/err" | head -n 2)"
	pass "$SCHEME: extended_lids auto fell back to legacy: $(grep -o '[0-9]* devices\? lack' "$DIR/err" | head -n 1) the extension"

	# create
	run vm create vm1 --hypervisor V-0-0
	lid=$(vmfield vm1 lid); vf=$(vmfield vm1 vf); guid=$(vmfield vm1 vguid)
	[ -n "$lid" ] && [ "$lid" -gt 0 ] && [ -n "$vf" ] || fail "$SCHEME: vm list: $(ctl --json vm list)"
	wait_until 5 answers "$lid" "F-0-0-$vf" H-1 ||
		fail "$SCHEME: LID $lid (vm1) is not answered by F-0-0-$vf from H-1"
	dump "$DIR/1"
	walks "$DIR/1" "$lid" "F-0-0-$vf"
	same_but "$DIR/0" "$DIR/1" "$lid"
	if [ "$SCHEME" = dynamic ]; then
		mapfile -t vfs < <(all_vfs | grep -vx "F-0-0-$vf")
		idle_is "$DIR/1" "${vfs[@]}"
	else
		same_but "$DIR/0" "$DIR/1"
		[ "$(reply lft_blocks)" = 0 ] || fail "prepopulated: vm create wrote $(reply lft_blocks) LFT blocks"
	fi
	pass "$SCHEME: vm1 created on F-0-0-$vf, LID $lid, answered from H-1, every switch leads there, other LIDs' routes unchanged"

	# migrate to another leaf
	run vm migrate vm1 --to V-2-0
	vf2=$(vmfield vm1 vf)
	[ "$(vmfield vm1 lid)" = "$lid" ] || fail "$SCHEME: vm1's LID changed: $(vmfield vm1 lid), was $lid"
	[ "$(vmfield vm1 vguid)" = "$guid" ] || fail "$SCHEME: vm1's vGUID changed"
	[ "$(vmfield vm1 hypervisor)" = V-2-0 ] || fail "$SCHEME: vm list says vm1 is on $(vmfield vm1 hypervisor)"
	if [ "$SCHEME" = prepopulated ]; then
		# the destination VF's LID before, swapped with the VM's
		swapped=$(vmc node --topo "$DIR/1.topo" "F-2-0-$vf2" | cut -d' ' -f3)
	fi
	wait_until 5 answers "$lid" "F-2-0-$vf2" H-3 ||
		fail "$SCHEME: after the migration LID $lid is not answered by F-2-0-$vf2 from H-3"
	dump "$DIR/2"
	walks "$DIR/2" "$lid" "F-2-0-$vf2"
	if [ "$SCHEME" = prepopulated ]; then
		[ -n "$swapped" ] && [ "$swapped" -gt 0 ] || fail "prepopulated: no LID on F-2-0-$vf2 before"
		walks "$DIR/2" "$swapped" "F-0-0-$vf"
		[ "$(vmc node --topo "$DIR/2.topo" "F-0-0-$vf" | cut -d' ' -f3)" = "$swapped" ] ||
			fail "prepopulated: F-0-0-$vf did not get LID $swapped"
		same_but "$DIR/1" "$DIR/2" "$lid" "$swapped"
	else
		same_but "$DIR/1" "$DIR/2" "$lid"
		mapfile -t vfs < <(all_vfs | grep -vx "F-2-0-$vf2")
		idle_is "$DIR/2" "${vfs[@]}"
	fi
	sgid=$(vmc gid "$(host_guid H-1)")
	gid=$(vmc gid "$guid")
	on_host H-1 saquery -p --sgid-to-dgid "$sgid-$gid" >"$DIR/pr" 2>&1 ||
		fail "$SCHEME: saquery PathRecord $sgid -> $gid: $(tail -n 2 "$DIR/pr")"
	dlid=$(sed -n 's/^[[:space:]]*dlid\.*//p' "$DIR/pr" | head -n 1)
	[ "$dlid" = "$lid" ] || fail "$SCHEME: PathRecord to $gid has DLID '$dlid', not $lid"
	pass "$SCHEME: vm1 migrated V-0-0 -> V-2-0 (F-2-0-$vf2): LID $lid answered by it from H-3, every switch leads there, PathRecord to $gid gives DLID $lid, other routes unchanged${swapped:+ (swapped LID $swapped leads to F-0-0-$vf)}"

	# within a leaf, in two steps: one physical switch, 1 block (dynamic) / <= 2
	! ctl vm migrate vm1 --to V-2-1 --commit >/dev/null 2>&1 ||
		fail "$SCHEME: vm migrate --commit without --prepare was accepted"
	run vm migrate vm1 --to V-2-1 --prepare
	answers "$lid" "F-2-0-$vf2" H-1 || fail "$SCHEME: vm migrate --prepare moved LID $lid"
	run vm migrate vm1 --to V-2-1 --commit
	vf3=$(vmfield vm1 vf)
	wait_until 5 answers "$lid" "F-2-1-$vf3" H-1 ||
		fail "$SCHEME: LID $lid not answered by F-2-1-$vf3 after the same-leaf migration"
	dump "$DIR/3"
	walks "$DIR/3" "$lid" "F-2-1-$vf3"
	w=$(changed "$DIR/2" "$DIR/3" "$lid" | tr '\n' ' ')
	[ "$w" = "0x0002c90100000002 " ] ||
		fail "$SCHEME: same-leaf migration changed LID $lid on physical switches '$w' (expected L0-S2 only)"
	n=$(reply lft_blocks)
	[ "$(reply switches_written)" = 1 ] || fail "$SCHEME: same-leaf: switches_written=$(reply switches_written)"
	if [ "$SCHEME" = dynamic ]; then
		[ "$n" = 1 ] || fail "dynamic: same-leaf migration: lft_blocks=$n, not 1"
	else
		[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "prepopulated: same-leaf migration: lft_blocks=$n"
	fi
	# in the LFT order: the destination vSwitch, the leaf, the source vSwitch
	[ "$(reply lft_order.how)" = ordered ] && [ "$(reply lft_order.waves)" = 3 ] ||
		fail "$SCHEME: same-leaf migration: lft_order $(jq -c .lft_order <<<"$REPLY_JSON"), not 3 ordered waves"
	pass "$SCHEME: same-leaf migration V-2-0 -> V-2-1: lft_blocks=$n on L0-S2 alone (dump_fts agrees), vswitch_blocks=$(reply vswitch_blocks), commit_us=$(reply commit_us), $(reply lft_order.reason)"

	# a heavy sweep finds nothing to write
	n=$(ups)
	ctl sweep --heavy >/dev/null || fail "$SCHEME: ibsmctl sweep --heavy"
	wait_until 30 ups_over "$n" || fail "$SCHEME: no heavy sweep"
	[ "$(last_up lft_blocks)" = 0 ] && [ "$(last_up portinfo_sets)" = 0 ] ||
		fail "$SCHEME: the heavy sweep after the migrations wrote: $(grep '^subnet up' "$DIR/out" | tail -n 1)"
	dump "$DIR/4"
	diff -q "$DIR/3.lft" "$DIR/4.lft" >/dev/null || fail "$SCHEME: the heavy sweep changed LFT entries"
	answers "$lid" "F-2-1-$vf3" H-2 || fail "$SCHEME: LID $lid lost after the heavy sweep"
	pass "$SCHEME: the heavy sweep after the migrations wrote nothing (lft_blocks=0 portinfo_sets=0), tables unchanged"

	if [ "$SCHEME" = dynamic ]; then
		run vm destroy vm1
		! answers "$lid" "F-2-1-$vf3" H-1 || fail "dynamic: LID $lid still answered after vm destroy"
		dump "$DIR/5"
		same_but "$DIR/4" "$DIR/5" "$lid"
		mapfile -t vfs < <(all_vfs)
		idle_is "$DIR/5" "${vfs[@]}"
		pass "dynamic: vm destroy: LID $lid answered by no one, F-2-1-$vf3 idle again, other routes unchanged"
	fi
	kill "$sm" 2>/dev/null
	wait "$sm" 2>/dev/null
	sim_stop
}

for s in ${T_VM_SCHEMES:-dynamic prepopulated}; do
	scheme_run "$s"
done
