#!/bin/bash
# QoS under ibsim (`qos: {mode, max_vls}`), judged with infiniband-diags:
# a 2-level fat tree of 6 leaves (2 hosts each, records shuffled so that
# the LIDs do not follow the leaves' GUID order), 2 spines.
#  - mode vftree, max_vls 4: `smpquery sl2vl` shows, on every switch
#    (in, out) pair a packet can take (in != out, each port 0 or a linked
#    port) and on every CA port, SL i -> VL i for i < 4 and SLs 4-15 on
#    VL 0 (ibsim starts with SL i -> VL i, SL 15 -> VL 7); every other
#    pair must answer; T_QOS_PAIRS=all judges them too (the issue's "every
#    (input, output) pair": ibsmd leaves in == out and unlinked ports as
#    they were);
#    `saquery -p` PathRecords for every ordered pair of hosts give SL =
#    Algorithm 1's entry for the two leaves, computed here (qos_check.py)
#    from ibnetdiscover's leaves in ascending GUID order: symmetric, 0
#    within a leaf; `smpquery vlarb`: equal weights on VLs 0-3 only; a
#    second heavy sweep (`ibsmctl sweep --heavy`) writes no SL2VL (0x0017)
#    or VLArb (0x0018) table (libmaddrop's counts); after a spine link
#    goes (ibsim Unlink) every PathRecord keeps its SL and no SL2VL table
#    is written; a link between two ports never linked before gets its 20
#    new (in, out) pairs programmed at the next heavy sweep, no other.
#  - mode none: no SL2VL or VLArb Set at all, every table as ibsim started
#    it (read by directed route before the SM), PathRecord SL 0.
#  - mode vftree, max_vls 15 (T_QOS_MODES="vftree:15"; not by default, the
#    clamp is test_qos_emu's): clamped with a warning to the VLs ibsim's
#    ports have (VLCap VL0-7: 8), SL2VL and PathRecords as above for 8.
#  - mode voqsw, max_vls 8, sls 8, on an irregular fabric (8 switches of
#    8 ports, 4 hosts each, switch graph 4-regular; fabgen irregular,
#    seed 1) routed -R updn, as in the VOQsw paper: qos_check.py computes
#    VOQsw itself (the rules of routing/qos/voqsw.c, from ibnetdiscover and
#    dump_fts); `smpquery sl2vl` on every linked switch pair and CA port
#    and the PathRecords of every pair with a listener at one end
#    (T_QOS_PATHS=all: all 992) are what it says, some SLs are not 0; a
#    second heavy sweep writes no SL2VL table; then the switch link the
#    most routes cross goes (Unlink): the PathRecords and SL2VL tables are
#    qos_check.py's over the new routes, the repair wrote exactly the
#    tables that changed, and three ibsm-listen (events.signalling
#    repath-only) are told exactly the pairs at them whose PathRecord
#    changed, with the new SL, among them pairs whose SL alone changed.
# T_QOS_MODES picks the runs, MODE:MAX_VLS (default "vftree:4 none:4 voqsw:8").
. "$(dirname "$0")/common.sh"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"
QOSCHECK="$SIM_ROOT/tests/sim/qos_check.py"
NET="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 6 --spines 2 --hosts-per-leaf 2 --shuffle 7 -o "$NET"

qc() { python3 "$QOSCHECK" "$@"; }

VOQ_NET="$SIM_TMP/irregular.net" VOQ_SLS=8 LPIDS=()
VOQ_LISTENERS=${VOQ_LISTENERS:-H-9 H-14 H-17}
case " ${T_QOS_MODES:-voqsw} " in
*" voqsw:"* | " voqsw ")
	gen irregular --switches 8 --seed 1 -o "$VOQ_NET"
	# the judge's own VOQsw reproduces a hand-worked example (a line
	# of three switches, two hosts each)
	qc voqsw-example >"$SIM_TMP/example" ||
		fail "qos_check.py's VOQsw is not the hand-worked example: $(cat "$SIM_TMP/example")"
	;;
esac

# the judge's own Algorithm 1 reproduces its matrix for 6 leaves and 4 VLs
[ "$(qc matrix --leaves 6 --max-vls 4 | tr -d '\n')" = \
	"[0,0,1,2,3,0][0,0,2,3,0,1][1,2,0,1,2,3][2,3,1,0,3,0][3,0,2,3,0,0][0,1,3,0,0,0]" ] ||
	fail "qos_check.py's Algorithm 1 is not Algorithm 1's 6-leaf, 4-VL matrix: $(qc matrix --leaves 6 --max-vls 4)"

ups() { grep -c '^subnet up' "$DIR/out"; }
ups_over() { [ "$(ups)" -gt "$1" ] || ! kill -0 "$SM_PID" 2>/dev/null; }
ctl() { "$IBSMCTL" -s "$DIR/sock" "$@"; }

# count KEY, sets ATTR, smps, stable: libmaddrop's counts of ibsmd's MADs
# (common.sh); smps is what a sweep sends, the listeners' SA queries
# (every second) are not in it
count() { mad_count "$DIR" "$1"; }
sets() { mad_sets "$DIR" "$1"; }
smps() { mad_smps "$DIR"; }
stable() { mad_stable "$DIR"; }

# row FILE: the VLs of the first SL2VL table in smpquery output
row() { sed -n 's/^ports: in *[0-9]*, out *[0-9]*: *|//p' "$1" | head -n 1 | tr '|' ' ' | xargs; }

# sl2vl_dump ARGS: (from $TOPO, default DIR/0.topo) DIR/sl2vl/sl2vl.LID for every switch (one smpquery per
# output port: all input ports) and CA port, then qos_check.py sl2vl ARGS
sl2vl_dump() {
	local lid n out
	mkdir -p "$DIR/sl2vl"
	# a few switches at a time (the subshell waits for its own children)
	sed -n 's/^Switch\s\+\([0-9]\+\)\s.*\blid \([0-9]\+\) .*/\2 \1/p' "${TOPO:-$DIR/0.topo}" | (
		k=0
		while read -r lid n; do
			for out in $(seq 0 "$n"); do
				on_host H-1 smpquery sl2vl "$lid" "$out" 2>&1
			done >"$DIR/sl2vl/sl2vl.$lid" &
			k=$((k + 1)); [ $((k % 4)) -ne 0 ] || wait
		done
		for lid in $(awk '{ print $2 }' "$DIR/pairs" | sort -un); do
			on_host H-1 smpquery sl2vl "$lid" >"$DIR/sl2vl/sl2vl.$lid" 2>&1 &
			k=$((k + 1)); [ $((k % 4)) -ne 0 ] || wait
		done
		wait
	)
	qc sl2vl --topo "${TOPO:-$DIR/0.topo}" --dir "$DIR/sl2vl" "$@" >"$DIR/sl2vl.check" || {
		head -n 20 "$DIR/sl2vl.check" >&2
		fail "$MODE: SL2VL tables: $(tail -n 1 "$DIR/sl2vl.check")"
	}
}

# path_sls [PAIRS [RECORDS]]: saquery -p for every ordered pair of hosts
# in PAIRS (default DIR/pairs; asked from H-1); the SL of each must be the
# pairs file's; their number in PATHS; RECORDS gets one line per pair,
# "SLID-DLID FIELD=VALUE ..." (the whole record, for a later diff)
path_sls() {
	local s sl d dl want got rec bad=0 n=0
	: >"${2:-/dev/null}"
	# the queries first, a few processes at a time (the subshell's wait
	# waits for its own children only, not for the daemon)
	rm -rf "$DIR/pr"; mkdir -p "$DIR/pr"
	awk '{ print NR, $2, $4 }' "${1:-$DIR/pairs}" | (
		while read -r n sl dl; do
			on_host H-1 saquery -p --src-to-dst "$sl:$dl" >"$DIR/pr/$n" 2>&1 &
			[ $((n % 4)) -ne 0 ] || wait
		done
		wait
	)
	n=0
	while read -r s sl d dl want; do
		rec=$(sed -n 's/^[[:space:]]*\([a-z_0-9]*\)\.\.\.*\(.*\)$/\1=\2/p' "$DIR/pr/$((n + 1))" | tr '\n' ' ')
		[ -n "${2:-}" ] && echo "$sl-$dl $rec" >>"$2"
		got=$(tr ' ' '\n' <<<"$rec" | sed -n 's/^sl=//p')
		n=$((n + 1))
		[ -n "$got" ] && got=$((got))	# saquery prints it in hex
		if [ "$got" != "$want" ]; then
			bad=$((bad + 1))
			[ "$bad" -le 5 ] && echo "  $s (LID $sl) -> $d (LID $dl): SL '$got', expected $want" >&2
		fi
	done <"${1:-$DIR/pairs}"
	[ "$bad" -eq 0 ] || fail "$MODE: $bad of $n PathRecords have the wrong SL"
	PATHS=$n
}

# mode_run MODE MAX_VLS
mode_run() {
	MODE=$1 MAXVL=$2
	DIR="$SIM_TMP/$MODE-$MAXVL"
	mkdir -p "$DIR"
	local net=$NET sm_args=()
	printf 'qos: {mode: %s, max_vls: %d}\n' "$MODE" "$MAXVL" >"$DIR/p.yaml"
	if [ "$MODE" = voqsw ]; then
		net=$VOQ_NET
		sm_args=(-R updn --log-level info)
		printf 'qos: {mode: voqsw, sls: %d, max_vls: %d}\nevents: {signalling: repath-only}\n' \
			"$VOQ_SLS" "$MAXVL" >"$DIR/p.yaml"
	fi
	sim_start "$net"
	# ibsim's own tables, by directed route before any SM: H-0's port and
	# its leaf switch (in 1, out 1)
	on_host H-0 smpquery -D sl2vl 0 >"$DIR/start.ca" 2>&1 || fail "smpquery -D sl2vl 0: $(cat "$DIR/start.ca")"
	on_host H-0 smpquery -D sl2vl 0,1 1 >"$DIR/start.sw" 2>&1 || fail "smpquery -D sl2vl 0,1 1: $(cat "$DIR/start.sw")"
	on_host H-0 smpquery -D portinfo 0 >"$DIR/start.pi" 2>&1 || fail "smpquery -D portinfo 0: $(cat "$DIR/start.pi")"
	START_ROW=$(row "$DIR/start.ca")
	[ -n "$START_ROW" ] && [ "$START_ROW" = "$(row "$DIR/start.sw")" ] ||
		fail "ibsim's start SL2VL: CA '$START_ROW', switch '$(row "$DIR/start.sw")'"
	note "ibsim starts with SL2VL $START_ROW"

	export MADDROP_COUNT="$DIR/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
	SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -c "$DIR/p.yaml" \
		-S "$DIR/state" -s "$DIR/sock" "${sm_args[@]}" >"$DIR/out" 2>"$DIR/err"
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	SM_PID=$SIM_LAST_PID
	wait_until 60 ups_over 0 && kill -0 "$SM_PID" 2>/dev/null || fail "$MODE: ibsmd did not come up: $(tail -n 3 "$DIR/err")"
	stable
	check_up "$DIR/0"
	local sl2vl_sets vlarb_sets tables skipped n
	sl2vl_sets=$(sets 0017); vlarb_sets=$(sets 0018)
	note "$MODE: bring-up: $sl2vl_sets SL2VL Sets, $vlarb_sets VLArb Sets, $(count total) MADs"

	if [ "$MODE" = vftree ]; then
		# the data VLs ibsim's ports have (VLCap VL0-N), the clamp
		local cap
		cap=$(sed -n 's/^VLCap:\.*VL0-\([0-9]*\)$/\1/p' "$DIR/start.pi")
		[ -n "$cap" ] || fail "no VLCap in smpquery portinfo: $(cat "$DIR/start.pi")"
		if [ "$MAXVL" -gt $((cap + 1)) ]; then
			MAXVL=$((cap + 1))
			grep -q "qos.max_vls $2: clamped to $MAXVL, the data VLs the link .* runs" "$DIR/err" ||
				fail "vftree: max_vls $2 not clamped to $MAXVL with a warning: $(grep -i qos "$DIR/err" | head -n 3)"
			pass "vftree: max_vls $2 clamped: $(grep -o 'qos.max_vls.*' "$DIR/err" | head -n 1)"
		fi
		qc pairs --topo "$DIR/0.topo" --max-vls "$MAXVL" >"$DIR/pairs" || fail "qos_check.py pairs"
		sl2vl_dump --max-vls "$MAXVL" --pairs "${T_QOS_PAIRS:-linked}"
		read -r tables skipped <"$DIR/sl2vl.check"
		[ "$sl2vl_sets" -gt 0 ] || fail "vftree: no SL2VL Set counted, yet the tables are right?"
		notice_counts "$sl2vl_sets" "$vlarb_sets"
		pass "vftree: $tables SL2VL tables (switch (in, out) pairs of port 0 and linked ports, in != out; every CA port): SL i -> VL i below $MAXVL, SLs $MAXVL-15 on VL 0 ($sl2vl_sets Sets, as ibsmd's notice says; $skipped more pairs answered, not judged: T_QOS_PAIRS=${T_QOS_PAIRS:-linked})"
		path_sls
		pass "vftree: $PATHS PathRecords carry Algorithm 1's SL for their leaves (GUID order; $(awk '$5 != 0' "$DIR/pairs" | wc -l) pairs off SL 0, 0 within a leaf)"
		vlarb_check
		second_sweep "$sl2vl_sets" "$vlarb_sets"
		# a spine link goes: the repair keeps every pair's SL (the leaves
		# are the same) and has no SL2VL table to write
		sim_cmd 'Unlink "L1-S0"[1]' >/dev/null
		wait_until 30 ups_over 2 && kill -0 "$SM_PID" 2>/dev/null ||
			fail "vftree: no sweep after Unlink \"L1-S0\"[1]: $(tail -n 3 "$DIR/err")"
		stable
		path_sls
		[ "$(sets 0017)" = "$sl2vl_sets" ] ||
			fail "vftree: the repair after Unlink wrote $(($(sets 0017) - sl2vl_sets)) SL2VL tables"
		pass "vftree: after Unlink \"L1-S0\"[1]: $PATHS PathRecords keep Algorithm 1's SL, no SL2VL table written ($(($(sets 0018) - vlarb_sets)) VLArb)"
		# a new link between two ports never linked before: the next heavy
		# sweep programs the pairs it adds, and only those: L0-S0 port 5
		# with ports 0, 1, 2, 4 (port 3 went with the Unlink), L1-S0 port 7
		# with ports 0, 2-6: 2 x (4 + 6) = 20; as many pairs judged as before
		# counted before the Link: its trap may start a sweep that writes
		# the new pairs before the requested one (CI saw 0 Sets after it)
		sl2vl_sets=$(sets 0017)
		sim_cmd 'Link "L0-S0"[5] "L1-S0"[7]' >/dev/null
		ctl sweep --heavy >/dev/null || fail "vftree: ibsmctl sweep --heavy"
		wait_until 30 ups_over 3 && kill -0 "$SM_PID" 2>/dev/null ||
			fail "vftree: no sweep after Link: $(tail -n 3 "$DIR/err")"
		stable
		check_up "$DIR/1"
		TOPO="$DIR/1.topo" sl2vl_dump --max-vls "$MAXVL" --pairs "${T_QOS_PAIRS:-linked}"
		read -r n skipped <"$DIR/sl2vl.check"
		[ "$n" = "$tables" ] && [ "$(($(sets 0017) - sl2vl_sets))" = 20 ] ||
			fail "vftree: after Link \"L0-S0\"[5] \"L1-S0\"[7]: $n tables judged (was $tables), $(($(sets 0017) - sl2vl_sets)) SL2VL Sets (20 expected: the pairs of the two new ports)"
		pass "vftree: after Link \"L0-S0\"[5] \"L1-S0\"[7] and a heavy sweep: $n SL2VL tables right, 20 written (the two new ports' pairs)"
	elif [ "$MODE" = voqsw ]; then
		voqsw_run "$sl2vl_sets" "$vlarb_sets"
	else
		qc pairs --topo "$DIR/0.topo" --max-vls 1 >"$DIR/pairs" || fail "qos_check.py pairs"
		[ "$sl2vl_sets" = 0 ] && [ "$vlarb_sets" = 0 ] ||
			fail "none: $sl2vl_sets SL2VL and $vlarb_sets VLArb Sets"
		sl2vl_dump --expect "$START_ROW" --pairs all
		path_sls
		pass "none: no SL2VL or VLArb Set, $(cut -d' ' -f1 "$DIR/sl2vl.check") SL2VL tables as ibsim started them, $PATHS PathRecords with SL 0"
	fi
	for pid in "${LPIDS[@]}"; do sim__stop_pid "$pid"; done
	LPIDS=()
	sim__stop_pid "$SM_PID"
	[ "$MODE" = none ] || verify_vls
	sim_stop
}

# verify_vls: a fresh `ibsmd --once --verify` on the fabric as it is now,
# same policy and state: its channel dependency graph is over (link, VL)
# with the SLs and SL-to-VL tables it computed, and has no cycle
verify_vls() {
	local extra=()
	[ "$MODE" = voqsw ] && extra=(-R updn)
	on_host H-0 "$IBSMD" --once --verify -c "$DIR/p.yaml" -S "$DIR/state" \
		"${extra[@]}" >"$DIR/verify.out" 2>"$DIR/verify.err" ||
		fail "$MODE: ibsmd --once --verify failed: $(tail -n 3 "$DIR/verify.out" "$DIR/verify.err")"
	grep -q 'channel dependencies over (link, VL)' "$DIR/verify.out" &&
		grep -q '^verify: OK.*no dependency cycle' "$DIR/verify.out" ||
		fail "$MODE: the verifier did not check the VLs, or found a cycle: $(grep -E 'channel|^verify' "$DIR/verify.out")"
	pass "$MODE: ibsmd --once --verify on the fabric: $(sed -n 's/^ *channel dependencies over (link, VL), //p' "$DIR/verify.out" | head -n 1) ($(grep -o '[0-9]* on a VL the link lacks' "$DIR/verify.out" | head -n 1))"
}

# notice_counts SL2VL VLARB: ibsmd's own count in the first heavy sweep's
# notice is libmaddrop's
notice_counts() {
	grep -m 1 'heavy sweep done' "$DIR/err" | grep -q " $1 SL2VL, $2 VLArb," ||
		fail "$MODE: ibsmd's notice '$(grep -m 1 'heavy sweep done' "$DIR/err")' is not the $1 SL2VL, $2 VLArb Sets counted"
}

# second_sweep SL2VL VLARB: a second heavy sweep, nothing changed, writes
# no SL2VL or VLArb table (the counts so far)
second_sweep() {
	ctl sweep --heavy >/dev/null || fail "$MODE: ibsmctl sweep --heavy"
	wait_until 60 ups_over 1 && kill -0 "$SM_PID" 2>/dev/null ||
		fail "$MODE: no second heavy sweep: $(tail -n 3 "$DIR/err")"
	stable
	[ "$(sets 0017)" = "$1" ] && [ "$(sets 0018)" = "$2" ] ||
		fail "$MODE: the second heavy sweep wrote $(($(sets 0017) - $1)) SL2VL and $(($(sets 0018) - $2)) VLArb tables"
	pass "$MODE: a second heavy sweep wrote no SL2VL or VLArb table"
}

# vlarb_check: `smpquery vlarb` on a CA port and a switch port: the data
# VLs 0..MAXVL-1 in the tables with one equal weight, no VL above
vlarb_check() {
	local lid out=$DIR/vlarb
	lid=$(awk 'NR == 1 { print $2 }' "$DIR/pairs")
	on_host H-1 smpquery vlarb "$lid" >"$out.ca" 2>&1 || fail "$MODE: smpquery vlarb $lid: $(cat "$out.ca")"
	lid=$(sed -n 's/^Switch\s.*\blid \([0-9]\+\) .*/\1/p' "$DIR/0.topo" | head -n 1)
	on_host H-1 smpquery vlarb "$lid" 1 >"$out.sw" 2>&1 || fail "$MODE: smpquery vlarb $lid 1: $(cat "$out.sw")"
	local f
	for f in "$out.ca" "$out.sw"; do
		qc vlarb --max-vls "$MAXVL" "$f" >"$f.check" 2>&1 || {
			cat "$f" >&2
			fail "$MODE: VLArb ($f): $(cat "$f.check")"
		}
	done
	pass "$MODE: VLArb on a CA port and a switch port: $(cat "$out.ca.check")"
}

# ---- mode voqsw ----
# listen: an ibsm-listen (repath and unpath notices) on each of VOQ_LISTENERS
listen() {
	local h
	LPIDS=()
	for h in $VOQ_LISTENERS; do
		on_host_bg "$h" "$LISTEN" --trap 69,68 --check-interval 1 >"$DIR/$h.out" 2>"$DIR/$h.err"
		LPIDS+=("$SIM_LAST_PID")
	done
	for h in $VOQ_LISTENERS; do
		wait_until 10 grep -q 'subscribed with the SM' "$DIR/$h.err" || fail "voqsw: listener $h did not subscribe"
	done
}

# probe PAIRS OUT: the pairs of PAIRS with a listener at one end (all of
# them with T_QOS_PATHS=all)
probe() {
	local h lids=""
	for h in $VOQ_LISTENERS; do
		lids="$lids $(awk -v h="$h" '$1 == h { print $2; exit }' "$1")"
	done
	awk -v lids="$lids" -v all="${T_QOS_PATHS:-}" '
		BEGIN { n = split(lids, l, " "); for (i = 1; i <= n; i++) on[l[i]] = 1 }
		all == "all" || ($2 in on) || ($4 in on)' "$1" >"$2"
}

# agrees PREFIX: ibsmd's last "qos: voqsw:" line has the x, x_max, paths
# covered and SLs used qos_check.py finds over PREFIX.topo and PREFIX.lfts
agrees() {
	local want line part
	want=$(qc voqsw-report --topo "$1.topo" --voqsw "$1.lfts" --sls "$VOQ_SLS" --max-vls "$MAXVL") ||
		fail "qos_check.py voqsw-report $1"
	line=$(grep 'qos: voqsw:' "$DIR/err" | tail -n 1)
	while IFS= read -r part; do
		[[ $line == *"$part"* ]] || fail "voqsw: ibsmd says '${line#*qos: }', qos_check.py '$want'"
	done < <(tr '|' '\n' <<<"$want")
}

# voqsw_run SL2VL VLARB (the bring-up's Sets): VOQsw as qos_check.py
# computes it from ibnetdiscover and dump_fts: SL2VL tables, PathRecord
# SLs, no write on a second sweep; then a link fault whose reroute changes
# SLs: the listeners are told exactly the pairs whose PathRecord changed
voqsw_run() {
	local tables skipped rep off l lid want=""
	local vq=(--max-vls "$MAXVL" --sls "$VOQ_SLS")
	qc pairs --topo "$DIR/0.topo" --voqsw "$DIR/0.lfts" "${vq[@]}" >"$DIR/pairs" 2>"$DIR/pairs.report" ||
		fail "qos_check.py pairs --voqsw: $(cat "$DIR/pairs.report")"
	off=$(awk '$5 != 0' "$DIR/pairs" | wc -l)
	[ "$off" -gt 0 ] || fail "voqsw: qos_check.py gives every pair SL 0: the test would prove nothing"
	rep=$(sed -n 's/^voqsw: //p' "$DIR/pairs.report")
	note "voqsw: qos_check.py: $rep; $off of $(wc -l <"$DIR/pairs") pairs off SL 0"
	agrees "$DIR/0"
	sl2vl_dump --voqsw "$DIR/0.lfts" "${vq[@]}" --pairs "${T_QOS_PAIRS:-linked}"
	read -r tables skipped <"$DIR/sl2vl.check"
	[ "$1" -gt 0 ] || fail "voqsw: no SL2VL Set counted, yet the tables are right?"
	notice_counts "$1" "$2"
	pass "voqsw: $tables SL2VL tables are qos_check.py's VOQsw (switch pairs in != out of port 0 and linked ports; every CA port; $1 Sets; $skipped more pairs answered, not judged: T_QOS_PAIRS=${T_QOS_PAIRS:-linked})"
	listen
	probe "$DIR/pairs" "$DIR/probe0"
	path_sls "$DIR/probe0" "$DIR/rec0"
	pass "voqsw: $PATHS PathRecords (pairs with a listener, $VOQ_LISTENERS, at one end; T_QOS_PATHS=all: every pair) carry qos_check.py's SL, $(awk '$5 != 0' "$DIR/probe0" | wc -l) of them off SL 0"
	vlarb_check
	second_sweep "$1" "$2"

	# the fault: the switch link the most routes cross that the fabric can
	# lose; the reroute moves tuples, their weights and so the SLs
	local cut sw port load n before nset
	cut=$(qc cut --topo "$DIR/0.topo" --lfts "$DIR/0.lfts") || fail "voqsw: no switch link to cut"
	read -r sw port load <<<"$cut"
	cut="Unlink \"$sw\"[$port]"
	n=$(grep -c 'paths: .* notices' "$DIR/err")
	before=$(sets 0017)
	sim_cmd "$cut" >/dev/null
	wait_until 30 more_rounds "$n" || fail "voqsw: no repath round after $cut: $(tail -n 3 "$DIR/err")"
	stable
	sleep 1	# Reports in flight reach the listeners
	check_up "$DIR/1"
	qc pairs --topo "$DIR/1.topo" --voqsw "$DIR/1.lfts" "${vq[@]}" >"$DIR/pairs1" 2>"$DIR/pairs1.report" ||
		fail "qos_check.py pairs --voqsw after the fault: $(cat "$DIR/pairs1.report")"
	agrees "$DIR/1"
	probe "$DIR/pairs1" "$DIR/probe1"
	path_sls "$DIR/probe1" "$DIR/rec1"
	pass "voqsw: after $cut ($load routes crossed it): $PATHS PathRecords carry qos_check.py's SLs over the new routes ($(sed -n 's/^voqsw: //p' "$DIR/pairs1.report"))"
	cp "$DIR/pairs1" "$DIR/pairs"	# sl2vl_dump's CA LIDs
	TOPO="$DIR/1.topo" sl2vl_dump --voqsw "$DIR/1.lfts" "${vq[@]}" --pairs "${T_QOS_PAIRS:-linked}"
	read -r tables skipped <"$DIR/sl2vl.check"
	# the repair writes the tables that changed, and only those
	nset=$(qc voqsw-changed --topo0 "$DIR/0.topo" --lfts0 "$DIR/0.lfts" --topo1 "$DIR/1.topo" \
		--lfts1 "$DIR/1.lfts" "${vq[@]}") || fail "qos_check.py voqsw-changed"
	[ "$nset" -gt 0 ] && [ "$(($(sets 0017) - before))" = "$nset" ] ||
		fail "voqsw: the repair wrote $(($(sets 0017) - before)) SL2VL tables, qos_check.py sees $nset change"
	pass "voqsw: after $cut: $tables SL2VL tables are qos_check.py's over the new routes; the repair wrote the $nset that changed"
	# what saquery shows changed: "SLID-DLID sl|other"
	python3 - "$DIR/rec0" "$DIR/rec1" >"$DIR/changed" <<'PY' || fail "voqsw: the records before and after do not pair up"
import sys
def load(path):
    out = {}
    for line in open(path):
        key, *fields = line.split()
        out[key] = dict(f.split("=", 1) for f in fields)
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
if set(a) != set(b):
    sys.exit(1)
for k in sorted(a):
    diff = sorted(f for f in set(a[k]) | set(b[k]) if a[k].get(f) != b[k].get(f))
    if diff:
        print(k, int(b[k].get("sl", "-1"), 0), int(b[k].get("pkt_life", "-1"), 0) & 0x3f, ",".join(diff))
PY
	local nch slonly
	nch=$(wc -l <"$DIR/changed")
	slonly=$(awk '$4 == "sl"' "$DIR/changed" | wc -l)
	[ "$slonly" -gt 0 ] || fail "voqsw: no pair with a listener changed its SL alone ($nch changed): the fault does not exercise it"
	for l in $VOQ_LISTENERS; do
		lid=$(awk -v h="$l" '$1 == h { print $2; exit }' "$DIR/pairs")
		awk -v me="$lid" '{ split($1, p, "-"); if (p[1] == me || p[2] == me) print $1, $2, $3 }' "$DIR/changed" | sort >"$DIR/$l.want"
		python3 -c '
import json, sys
for line in open(sys.argv[1]):
    n = json.loads(line)
    if n["trap"] == 69 and not n["wildcard"]:
        print("%d-%d %d %d" % (n["slid"], n["dlid"], n["sl"], n["packet_life"] & 0x3f))
    elif n["trap"] == 68 or n["wildcard"]:
        print("unexpected %s" % line.strip())' "$DIR/$l.out" | sort >"$DIR/$l.got"
		cmp -s "$DIR/$l.want" "$DIR/$l.got" ||
			fail "voqsw: $l was told $(wc -l <"$DIR/$l.got") pairs, saquery shows $(wc -l <"$DIR/$l.want") changed at it: $(diff "$DIR/$l.want" "$DIR/$l.got" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
		want="$want $(wc -l <"$DIR/$l.want")"
	done
	pass "voqsw: repath-only: each listener was told exactly the pairs at it whose PathRecord changed, with the new SL and packet life (per listener:$want; of the $nch changed PathRecords asked, $slonly changed only their SL)"
	if [ "${T_QOS_PATHS:-}" = all ]; then
		# every pair asked: ibsmd's round found as many as saquery shows
		local round
		round=$(grep 'paths: .* notices' "$DIR/err" | sed -n "$((n + 1))p")
		[[ $round == *"paths: $nch repath, 0 unpath"* ]] ||
			fail "voqsw: saquery shows $nch pairs changed, ibsmd's round: ${round#*paths: }"
		pass "voqsw: ibsmd's round after the fault counted the $nch pairs saquery shows changed"
	fi
}
more_rounds() { [ "$(grep -c 'paths: .* notices' "$DIR/err")" -gt "$1" ] || ! kill -0 "$SM_PID" 2>/dev/null; }

for m in ${T_QOS_MODES:-vftree:4 none:4 voqsw:8}; do
	mode_run "${m%:*}" "${m#*:}"
done
