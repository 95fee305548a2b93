#!/bin/bash
# The VL arbitration policy under ibsim (qos.vlarb_low / vlarb_high,
# ibsmd.yaml(5)), judged with infiniband-diags' `smpquery vlarb` on a CA
# port and a switch port: a 2-leaf tree, vftree with no qos.max_vls (ibsim's
# ports run VL0-7: 8 data VLs).  The low table names VL 9 (the ports send on
# VL0-7 only: left out, with a warning) and, of what is left, 9 entries
# for ibsim's VLArbLowCap of 8 (the last left out, with a warning); the high
# table is written as given.  ibsim keeps no VLHighLimit
# (vlarb_high_limit is test_qos_emu's).
. "$(dirname "$0")/common.sh"
NET="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 2 --spines 1 --hosts-per-leaf 2 -o "$NET"
cat >"$SIM_TMP/p.yaml" <<'YAML'
qos:
  mode: vftree
  vlarb_low: "0:64,1:64,2:32,3:32,9:7,4:16,5:16,6:16,7:16,0:1"
  vlarb_high: "0:255,1:8"
YAML
LOW="0:64 1:64 2:32 3:32 4:16 5:16 6:16 7:16"
HIGH="0:255 1:8"

# entries FILE TABLE: the "VL:weight" entries of smpquery's Low or High
# table with a weight above 0, in decimal
entries() {
	local e out=()
	for e in $(awk -v t="$2" '
		/^# / { cur = ($0 ~ "^# " t " priority") }
		cur && /^VL/ { n = split($0, v, "|") }
		cur && /^WEIGHT/ { split($0, w, "|")
			for (i = 2; i < n; i++) { gsub(/ /, "", v[i]); gsub(/ /, "", w[i])
				print v[i] ":" w[i] } }' "$1"); do
		[ $((${e#*:})) -gt 0 ] && out+=("$((${e%:*})):$((${e#*:}))")
	done
	echo "${out[*]}"
}

sim_start "$NET"
ibsmd_once H-0 "$SIM_TMP/state" -c "$SIM_TMP/p.yaml" ||
	fail "ibsmd --once: exit $?: $(tail -n 3 "$SIM_TMP/once.err")"
grep -q "qos.vlarb_low: entries for VLs the port does not send on left out on [0-9]* ports (down to 8 data VLs" "$SIM_TMP/once.err" ||
	fail "no warning for the VL 9 entry: $(grep -i vlarb "$SIM_TMP/once.err" | head -n 3)"
grep -q "qos.vlarb_low: entries past the port's VLArbitrationLowCap left out on [0-9]* ports" "$SIM_TMP/once.err" ||
	fail "no warning for the entry past VLArbLowCap: $(grep -i vlarb "$SIM_TMP/once.err" | head -n 3)"
on_host H-1 smpquery -D vlarb 0 >"$SIM_TMP/ca" 2>&1 || fail "smpquery -D vlarb 0: $(cat "$SIM_TMP/ca")"
on_host H-1 smpquery -D vlarb 0,1 1 >"$SIM_TMP/sw" 2>&1 || fail "smpquery -D vlarb 0,1 1: $(cat "$SIM_TMP/sw")"
for f in ca sw; do
	low=$(entries "$SIM_TMP/$f" Low) high=$(entries "$SIM_TMP/$f" High)
	[ "$low" = "$LOW" ] && [ "$high" = "$HIGH" ] || {
		cat "$SIM_TMP/$f" >&2
		fail "$f port: low '$low' (want '$LOW'), high '$high' (want '$HIGH')"
	}
done
pass "VLArb on a CA port and a switch port: low $LOW (VL 9 and the 9th entry left out, with warnings), high $HIGH"
note "$(grep -o "qos.vlarb_low: .*" "$SIM_TMP/once.err" | head -n 2 | tr "\n" ";")"
sim_stop
