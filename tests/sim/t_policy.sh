#!/bin/bash
# Bad policy files (unknown key, wrong type, value out of range, YAML syntax
# error, a documented key nothing implements yet) each give a
# file:line:column message and exit 78, before anything touches a fabric;
# a bad command line exits 2.
. "$(dirname "$0")/common.sh"

check_bad() {	# NAME EXPECTED-REGEX YAML
	local name=$1 want=$2 f="$SIM_TMP/$1.yaml" out rc
	printf '%s' "$3" >"$f"
	out=$("$IBSMD" --once -c "$f" -S "$SIM_TMP/state" 2>&1)
	rc=$?
	[ "$rc" -eq 78 ] || fail "$name: exit $rc, expected 78 ($out)"
	grep -Eq "^ibsmd: $f:$want" <<<"$out" || fail "$name: message '$out' does not match '$f:$want'"
	pass "$name: exit 78: ${out#ibsmd: $SIM_TMP/}"
}

check_bad unknown-key "3:3: unknown key 'sweep.intervl_s'" $'sm: {priority: 1}\nsweep:\n  intervl_s: 5\n'
check_bad wrong-type "2:11: .*mad.window.*integer" $'mad:\n  window: lots\n'
check_bad out-of-range "1:16: sm.priority: 16 is out of range 0..15" $'sm: {priority: 16}\n'
check_bad syntax "3:4: syntax error: " $'routing:\n  engine: [minhop\nlmc: 0\n'
# documented keys nothing implements yet: refused at the key, never ignored
# VOQsw's SL budget means nothing to another mode: refused at the key
check_bad qos-sls "4:3: qos.sls: only with mode voqsw" $'lmc: 0\nqos:\n  mode: vftree\n  sls: 8\n'
check_bad qos-sls-range "1:25: qos.sls: 17 is out of range 1..16" $'qos: {mode: voqsw, sls: 17}\n'
check_bad events "1:22: events.signalling: 'all' is not one of hybrid, wildcard, repath-only, hybrid-affected" $'events: {signalling: all}\n'
check_bad partitions-ipoib "3:33: partitions\\[0\\].ipoib: 'yes' is not one of false, true" $'sm: {priority: 1}\npartitions:\n  - {name: a, pkey: 0x1, ipoib: yes}\n'
# partition errors: at the key, naming both partitions of a P_Key clash
check_bad partitions-clash "3:15: partitions\\[1\\].pkey: partitions 'a' and 'b' both have P_Key 0x0001" $'partitions:\n  - {name: a, pkey: 0x1}\n  - {name: b, pkey: 1}\n'
check_bad control-group "2:10: control.group: no group 'no-such-group-ibsmd'" $'control:\n  group: no-such-group-ibsmd\n'
check_bad misspelt "1:7: unknown key 'qos.mod'" $'qos: {mod: none}\n'
check_bad vlarb-vl "2:20: qos.vlarb_low: entry 2: VL 15 is out of range 0..14" $'qos:\n  vlarb_low: "0:64,15:10"\n'
check_bad dor-dimensions "2:25: routing.dor.dimensions\\[1\\]: 0 is out of range 1..255" $'routing:\n  dor: {dimensions: [4, 0]}\n'
check_bad vlarb-max-vls "2:21: qos.vlarb_high: entry 2: VL 4 is at or above qos.max_vls 4" $'qos:\n  vlarb_high: "0:10,4:10"\n  max_vls: 4\n'
[ -e "$SIM_TMP/state" ] && fail "a bad policy created the state directory"

# -n / --check: the policy alone, 0 or 78, nothing else touched
out=$("$IBSMD" -n -c "$SIM_ROOT/etc/ibsmd.yaml" 2>&1); rc=$?
[ "$rc" -eq 0 ] && [ "$out" = "$SIM_ROOT/etc/ibsmd.yaml: policy OK" ] ||
	fail "-n on the example policy: exit $rc ($out)"
f="$SIM_TMP/qos-sls.yaml"
out=$("$IBSMD" --check -c "$f" 2>"$SIM_TMP/check.err"); rc=$?
[ "$rc" -eq 78 ] && [ -z "$out" ] &&
	grep -q "^ibsmd: $f:4:3: qos.sls: only with mode voqsw$" "$SIM_TMP/check.err" ||
	fail "--check on a bad policy: exit $rc, stdout '$out', stderr '$(cat "$SIM_TMP/check.err")'"
out=$("$IBSMD" -n -c "$SIM_TMP/nonexistent.yaml" 2>&1); rc=$?
[ "$rc" -eq 78 ] || fail "-n on a missing file: exit $rc ($out)"
if [ ! -e /etc/ibsmd/ibsmd.yaml ]; then
	out=$("$IBSMD" -n 2>&1); rc=$?
	[ "$rc" -eq 0 ] && grep -q "built-in defaults" <<<"$out" ||
		fail "-n without a policy file: exit $rc ($out)"
fi
printf 'qos: {mode: voqsw, sls: 4}\n' >"$SIM_TMP/voqsw.yaml"
out=$("$IBSMD" -n -c "$SIM_TMP/voqsw.yaml" 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "-n on qos.mode voqsw, sls 4: exit $rc ($out)"
[ -e "$SIM_TMP/state" ] && fail "a bad policy created the state directory"
pass "-n: example policy and voqsw OK (exit 0), bad policy exit 78 with file:line:col"

# -R: the error lists exactly the engines --help lists (the engine table)
help_engines=$("$IBSMD" --help | sed -n '/^routing engines/,$p' | awk 'NR > 1 {print $1}' | tr '\n' ' ')
[ -n "$help_engines" ] || fail "--help lists no routing engine"
out=$("$IBSMD" -n -R ftree,nosuch 2>&1); rc=$?
[ "$rc" -eq 2 ] && [ "$out" = "ibsmd: -R: unknown routing engine 'nosuch' (known: ${help_engines% })" ] ||
	fail "-R nosuch: exit $rc, '$out' does not list '${help_engines% }'"
out=$("$IBSMD" -n -R "$(tr ' ' ',' <<<"${help_engines% }")" 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "-R with every engine --help lists: exit $rc ($out)"
pass "-R: unknown engines refused with the list --help prints: ${help_engines% }"

# --migrate's usage: bad usage 2, an unknown SRC 1 (t_migrate.sh: the counts)
for args in "--migrate A" "--scheme dynamic" "--method full" "--migrate A B --method nosuch" \
	    "--migrate A B --scheme nosuch"; do
	out=$("$IBSMD" --offline "$SIM_ROOT/etc/demo.net" -S "$SIM_TMP/st-flag" $args 2>&1); rc=$?
	[ "$rc" -eq 2 ] || fail "$args: exit $rc, '$out'"
done
out=$("$IBSMD" -S "$SIM_TMP/st-flag" --migrate A B 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "needs --offline" <<<"$out" || fail "--migrate without --offline: exit $rc, '$out'"
out=$("$IBSMD" --offline "$SIM_ROOT/etc/demo.net" -S "$SIM_TMP/st-flag" --migrate nosuch-host B 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "no CA port with a LID named 'nosuch-host'" <<<"$out" ||
	fail "--migrate nosuch-host: exit $rc, '$out'"
pass "--migrate: bad usage exits 2, an unknown SRC exits 1"

out=$("$IBSMD" --bogus 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "bad option: exit $rc"
out=$("$IBSMD" -R nosuch --offline /dev/null 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "bad engine name: exit $rc ($out)"
pass "bad command lines exit 2"
