# tests/sim/common.sh: what the ibsmd end-to-end tests share (sources lib.sh).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IBSMD="$SIM_ROOT/build/ibsmd"
IBSMCTL="$SIM_ROOT/build/ibsmctl"
LISTEN="$SIM_ROOT/build/ibsm-listen"
SIM_LIDS="$SIM_ROOT/tests/sim/lids_of.py"
[ -x "$IBSMD" ] || fail "build/ibsmd is missing: run make"

# gen ARGS... -o FILE: the fabric generator
gen() {
	python3 "$SIM_FABGEN" "$@" 2>/dev/null || fail "fabgen $*"
}

# table3 NODES: "m1 m2 w2" of the pFTree paper's Table 3 row of NODES
# nodes, XGFT(2; m1,m2; 1,w2) (fails for a size not in it)
table3() {
	case $1 in
	32) echo "8 4 4" ;; 48) echo "12 4 4" ;; 64) echo "16 4 4" ;;
	128) echo "16 8 8" ;; 192) echo "24 8 8" ;; 256) echo "32 8 8" ;;
	512) echo "32 16 16" ;; 768) echo "48 16 16" ;; 1024) echo "64 16 16" ;;
	*) return 1 ;;
	esac
}

# ibsmd_once HOST STATE_DIR [ibsmd options]: one bring-up; stdout in
# $SIM_TMP/once.out, stderr in $SIM_TMP/once.err; returns ibsmd's status.
ibsmd_once() {
	local host=$1 state=$2
	shift 2
	on_host "$host" "$IBSMD" --once -S "$state" "$@" \
		>"$SIM_TMP/once.out" 2>"$SIM_TMP/once.err"
}

# summary KEY: a value from the last summary line of $SIM_TMP/once.out
summary() {
	grep '^subnet up:' "$SIM_TMP/once.out" | tail -n 1 |
		tr ' ' '\n' | sed -n "s/^$1=//p"
}

# A daemon's heavy sweeps are its 'subnet up:' lines, in LOG ($log when
# not given).  sweeps [LOG]: how many; more_sweeps_than N [LOG]: more
# than N; wait_up SECONDS LOG [WHAT]: waits for the first, and fails
# ("no 'subnet up' WHAT" and LOG's last 5 lines) when none comes.
sweeps() { grep -c '^subnet up:' "${1:-$log}"; }
more_sweeps_than() { [ "$(sweeps "${2:-$log}")" -gt "$1" ]; }
wait_up() {
	wait_until "$1" grep -q '^subnet up:' "$2" ||
		fail "no 'subnet up'${3:+ $3}: $(tail -n 5 "$2")"
}

# check_up PREFIX: dump with infiniband-diags and verify; fail with the report.
check_up() {
	local prefix=$1
	sim_dump "$prefix" || fail "infiniband-diags could not dump the fabric: $(tail -n 3 "$prefix.err")"
	sim_check "$prefix" >"$prefix.check" 2>&1 || {
		head -n 30 "$prefix.check" >&2
		fail "check_fabric.py found problems ($prefix)"
	}
}

# free_port: a TCP port free on 127.0.0.1 now (a test's own listener)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# host_guid H-N: the GUID of host N's port 1 (fabgen: 0x0002c90200000000 + 4N + 1)
host_guid() { printf '0x%016x' $((0x0002c90200000000 + 4 * ${1#H-} + 1)); }

# sminfo_master HOST [LID]: `sminfo` from H-5 (asking its SM LID, or LID)
# names HOST's port, in state MASTER
sminfo_master() {
	local out g
	out=$(on_host H-5 sminfo ${2:+"$2"} 2>/dev/null) || return 1
	g=$(sed -n 's/.* sm guid \(0x[0-9a-fA-F]*\),.*SMINFO_MASTER.*/\1/p' <<<"$out")
	[ -n "$g" ] && [ "$(printf '0x%016x' "$g")" = "$(host_guid "$1")" ]
}

# lids_tables PREFIX: dump with infiniband-diags (check_up), then PREFIX.lids
# (lids_of.py: GUID LID) and PREFIX.lft (lft_entries.py: switch LID port)
lids_tables() {
	check_up "$1"
	python3 "$SIM_LIDS" "$1.topo" >"$1.lids" || fail "lids_of.py $1.topo"
	python3 "$SIM_ROOT/tests/sim/lft_entries.py" "$1.lfts" >"$1.lft" || fail "lft_entries.py $1.lfts"
	[ -s "$1.lids" ] && [ -s "$1.lft" ] || fail "empty dump $1"
}

# same_as BEFORE AFTER WHAT: the LIDs and forwarding entries of two
# lids_tables dumps are identical
same_as() {
	diff -q "$1.lids" "$2.lids" >/dev/null ||
		fail "$3: LIDs changed: $(diff "$1.lids" "$2.lids" | head -n 5)"
	diff -q "$1.lft" "$2.lft" >/dev/null ||
		fail "$3: forwarding entries changed: $(diff "$1.lft" "$2.lft" | grep -c '^[<>]') lines differ"
}

# status_field SOCK KEY[.KEY...]: a value of `ibsmctl --json status` from
# the daemon on the control socket SOCK.
status_field() {
	timeout 10 "$IBSMCTL" -s "$1" --json status | python3 -c '
import functools, json, sys
print(functools.reduce(lambda o, k: o[k], sys.argv[1].split("."), json.load(sys.stdin)))' "$2"
}

# libmaddrop's counts of the SM's MADs (MADDROP_COUNT=DIR/count.%p):
# mad_count DIR KEY: the sum over DIR's count files; mad_sets DIR ATTR:
# Sets of SMP attribute ATTR (4 hex digits), LID- and directed-routed;
# mad_smps DIR: SMPs of every method (what a sweep sends); mad_stable DIR
# [SECONDS]: waits until mad_smps stays the same SECONDS (default 1; the
# counts lag 100 ms)
mad_count() { cat "$1"/count.* 2>/dev/null | awk -v k="$2" '$1 == k { n += $2 } END { print n + 0 }'; }
mad_sets() { echo $(($(mad_count "$1" "class_0x01_method_0x02_attr_0x$2") + $(mad_count "$1" "class_0x81_method_0x02_attr_0x$2"))); }
mad_smps() {
	echo $(($(mad_count "$1" class_0x01_method_0x01) + $(mad_count "$1" class_0x01_method_0x02) +
		$(mad_count "$1" class_0x81_method_0x01) + $(mad_count "$1" class_0x81_method_0x02)))
}
mad_stable() {
	local a b
	b=$(mad_smps "$1")
	while :; do
		sleep "${2:-1}"
		a=$(mad_smps "$1")
		[ "$a" = "$b" ] && break
		b=$a
	done
}
