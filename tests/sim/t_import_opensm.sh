#!/bin/bash
# ibsmd --import-opensm (ibsmd(8), IMPORTING FROM OPENSM): OpenSM brings a
# fresh ibsim fabric up with its shipped opensm.conf (`opensm -c`) and a
# partitions.conf of 4 tenants with OpenSM's keywords, writing guid2lid in
# its cache directory (OSM_CACHE_DIR); OpenSM stops; its files are
# imported; `ibsmd -n` accepts the policy; ibsmd, started on a fresh ibsim
# of the same fabric (every port at LID 0) with the imported policy and
# state, gives every port the LID OpenSM gave it, compared GUID by GUID
# from ibnetdiscover (lids_of.py).  `ibsmd -n` on opensm.conf itself says
# what it is and names the importer.  A first ibsmd run without the state
# shows that its own choice differs, so the comparison can fail.
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
cat >"$SIM_TMP/osm/partitions.conf" <<EOF
# OpenSM's shipped Default line and four tenants
Default=0x7fff, ipoib : ALL=full ;
storage=0x8001, ipoib, sl=1 : $(host_guid H-0)=full, $(host_guid H-1), ALL_SWITCHES=full;
compute=0x0002 : $(host_guid H-2)=both, $(host_guid H-3)=limited, SELF=full ;
batch = 0x0003, defmember=full : $(host_guid H-4),
    $(host_guid H-5)=limited;
io=0x0004,ipoib:
	mgid=ff12:401b::16,sl=1 # IGMP
	ALL_CAS=limited;
EOF

# ---- an OpenSM file given as policy: named so, with the importer ----
"$IBSMD" -n -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>"$SIM_TMP/n.err"
rc=$?
[ "$rc" = 78 ] || fail "ibsmd -n -c opensm.conf: exit $rc, not 78"
grep -q "looks like OpenSM's opensm.conf.*ibsmd --import-opensm" "$SIM_TMP/n.err" ||
	fail "ibsmd -n -c opensm.conf does not point at the importer: $(cat "$SIM_TMP/n.err")"

# ---- ibsmd's own LIDs on a fresh fabric (no state): the control ----
sim_start "$net"
ibsmd_once H-7 "$SIM_TMP/own" || fail "ibsmd --once: $(tail -n 3 "$SIM_TMP/once.err")"
lids_tables "$SIM_TMP/own"
sim_stop

# ---- OpenSM ----
sim_start "$net"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-7 opensm -F "$SIM_TMP/osm/opensm.conf" -P "$SIM_TMP/osm/partitions.conf" \
	-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
osm=$SIM_LAST_PID
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
wait_until 10 test -s "$SIM_TMP/osm/guid2lid" || fail "OpenSM wrote no guid2lid in OSM_CACHE_DIR"
lids_tables "$SIM_TMP/opensm"
sim__stop_pid "$osm"
sim_stop
cmp -s "$SIM_TMP/own.lids" "$SIM_TMP/opensm.lids" &&
	fail "ibsmd's own LIDs are OpenSM's on this fabric: the comparison below could not fail"
n_diff=$(diff "$SIM_TMP/own.lids" "$SIM_TMP/opensm.lids" | grep -c '^>')

# ---- the import ----
imp="$SIM_TMP/imported"
"$IBSMD" --import-opensm "$SIM_TMP/osm/opensm.conf" "$SIM_TMP/osm/partitions.conf" \
	"$SIM_TMP/osm/guid2lid" --import-to "$imp" >"$SIM_TMP/import.out" 2>"$SIM_TMP/import.err" ||
	fail "--import-opensm: exit $?: $(tail -n 3 "$SIM_TMP/import.err")"
[ -s "$imp/ibsmd.yaml" ] && [ -s "$imp/guid2lid" ] || fail "--import-to wrote no ibsmd.yaml or guid2lid"
bad=$(grep -v '^import: warning: ' "$SIM_TMP/import.err")
[ -z "$bad" ] || fail "stderr lines that are not warnings: $bad"
grep -q 'membership: full' "$imp/ibsmd.yaml" || fail "Default ALL=full did not become membership: full"
grep -q "$(host_guid H-1)=limited" "$imp/ibsmd.yaml" || fail "a member without =full is not =limited"
"$IBSMD" -n -c "$imp/ibsmd.yaml" >"$SIM_TMP/check.out" 2>&1 || fail "ibsmd -n: $(cat "$SIM_TMP/check.out")"
pass "imported: $(grep -c . "$SIM_TMP/import.err") warnings, ibsmd -n: $(cat "$SIM_TMP/check.out")"

# ---- ibsmd with the imported policy and state on a fresh fabric ----
sim_start "$net"
ibsmd_once H-7 "$imp" -c "$imp/ibsmd.yaml" || fail "ibsmd --once with the import: $(tail -n 3 "$SIM_TMP/once.err")"
lids_tables "$SIM_TMP/after"
sim_stop
diff "$SIM_TMP/opensm.lids" "$SIM_TMP/after.lids" >"$SIM_TMP/lids.diff" ||
	fail "LIDs OpenSM gave were not kept: $(head -n 6 "$SIM_TMP/lids.diff" | tr '\n' ';')"
pass "every LID OpenSM gave kept ($(grep -c . "$SIM_TMP/opensm.lids") ports, $n_diff of which ibsmd alone numbers otherwise)"
