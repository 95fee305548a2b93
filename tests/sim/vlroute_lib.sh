# For the engines that set their own SLs (dfsssp's layers, dor's
# datelines), under ibsim with infiniband-diags: sourced by t_dfsssp.sh
# and t_dor.sh after common.sh.

# sl_of S D: "S D SL", the SL of saquery -p from LID S to LID D (at H-0)
sl_of() {
	local sl
	sl=$(on_host H-0 saquery -p --slid "$1" --dlid "$2" 2>&1 |
		sed -n 's/^\s*sl\.\+\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1)
	[ -n "$sl" ] && echo "$1 $2 $((sl))"
}

# sls PREFIX CAS: PREFIX.lids (GUID LID) and PREFIX.sls, "SLID DLID SL"
# for every CA base LID (the ports whose GUIDs are the first column of
# CAS) to every other LID, four saquery at a time
sls() {
	local s d
	python3 "$SIM_LIDS" "$1.topo" >"$1.lids" || fail "lids_of.py $1.topo"
	awk 'NR == FNR { ca[$1] = 1; next } ($1 in ca) { print $2 }' \
		"$2" "$1.lids" | while read -r s; do
		awk '{ print $2 }' "$1.lids" | while read -r d; do
			[ "$s" = "$d" ] || echo "$s $d"
		done
	done | (
		k=0
		while read -r s d; do
			sl_of "$s" "$d" >"$1.sl.$k" &
			k=$((k + 1)); [ $((k % 4)) -ne 0 ] || wait
		done
		wait
	)
	cat "$1".sl.* >"$1.sls"
}

# sl2vl_dump PREFIX: PREFIX.sl2vl/sl2vl.LID, `smpquery sl2vl LID OUT` for
# every output port of every switch, `smpquery sl2vl LID` of every CA port
sl2vl_dump() {
	local lid n out
	mkdir -p "$1.sl2vl"
	sed -n 's/^Switch\s\+\([0-9]\+\)\s.*\blid \([0-9]\+\) .*/\2 \1/p' "$1.topo" |
		while read -r lid n; do
			for out in $(seq 0 "$n"); do
				on_host H-0 smpquery sl2vl "$lid" "$out" 2>&1
			done >"$1.sl2vl/sl2vl.$lid"
		done
	grep '^0x' "$1.lids" | while read -r _ lid; do
		grep -q "^Switch.*\blid $lid " "$1.topo" ||
			on_host H-0 smpquery sl2vl "$lid" >"$1.sl2vl/sl2vl.$lid" 2>&1
	done
}

# vl_cdg PREFIX: cdg_check.py over (link, VL), the VL of each hop from the
# switches' SL-to-VL tables read back; its line in PREFIX.cdg
vl_cdg() {
	python3 "$SIM_ROOT/tests/sim/cdg_check.py" --topo "$1.topo" --lfts "$1.lfts" \
		--sls "$1.sls" --sl2vl "$1.sl2vl" >"$1.cdg" 2>&1
}

# same_sls PREFIX OFFSLS: the daemon's SLs (PREFIX.sls by LID) are the
# offline run's (OFFSLS, --dump-sls, by port GUID)
same_sls() {
	python3 - "$1.lids" "$1.sls" "$2" <<'PY'
import sys
guid = {}
for line in open(sys.argv[1]):
    g, lid = line.split()[:2]
    guid[int(lid)] = int(g, 16)
got = {}
for line in open(sys.argv[2]):
    s, d, sl = map(int, line.split())
    got[(guid[s], guid[d])] = sl
off = {}
for line in open(sys.argv[3]):
    s, d, sl = line.split()
    off[(int(s, 16), int(d, 16))] = int(sl)
bad = [k for k in got if off.get(k) != got[k]]
if bad or not got:
    print("%d of %d pairs differ, e.g. %s: daemon %s, offline %s" % (
        len(bad), len(got), bad[:1], [got[k] for k in bad[:1]], [off.get(k) for k in bad[:1]]))
    sys.exit(1)
PY
}
