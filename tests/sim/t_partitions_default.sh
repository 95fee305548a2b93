#!/bin/bash
# The default partition's membership (ibsmd.yaml(5), default_partition),
# beside OpenSM with its shipped partitions.conf line
# `Default=0x7fff, ipoib : ALL=full;` and the same tenants, on a fresh
# ibsim of the same fabric: a 2-level tree of 8 hosts, the SM on H-7,
#   tenantA 0x0001: H-0 H-1     tenantB 0x0002: H-2 H-3     H-4: none
# With the default membership (full, no key given) two hosts in no common
# tenant (H-0 -> H-2, H-0 -> H-4) get a PathRecord with P_Key 0xFFFF, and
# a tenant's pair its own P_Key, as from OpenSM; every host holds 0xFFFF.
# Reloaded with `default_partition: {membership: limited}` and the members
# written as OpenSM's keywords and =full/=both, the hosts hold 0x7FFF and
# the pairs in no common tenant get no PathRecord, the tenant's still do.
# The partitions' mgroups (partitions.conf's mgid= lines; OpenSM's scope=
# flag, default 2, overwrites the MGID's scope nibble, so both are given
# link-local MGIDs) are listed by `saquery -g` before any join, as
# OpenSM's, and go with the policy that drops them.
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

net="$SIM_TMP/ft.net" pol="$SIM_TMP/p.yaml" log="$SIM_TMP/ibsmd.log" sock="$SIM_TMP/ctl.sock"
gen ftree2 --radix 8 --leaves 2 --spines 2 --hosts-per-leaf 4 -o "$net"
cat >"$pol" <<EOF
default_partition:
  membership: full
  mgroups: [{mgid: "ff12:601b::2"}]
partitions:
  - name: tenantA
    pkey: 0x0001
    members: ["$(host_guid H-0)", "$(host_guid H-1)"]
    mgroups: [{mgid: "ff12::1", sl: 1, qkey: 0xdead, mtu: 2}]
  - {name: tenantB, pkey: 0x0002, members: ["H-2", "H-3"]}
EOF
cat >"$SIM_TMP/partitions.conf" <<EOF
Default=0x7fff, ipoib :
	mgid=ff12:601b::2
	ALL=full;
tenantA=0x0001 :
	mgid=ff12::1,sl=1,Q_Key=0xdead,mtu=2
	$(host_guid H-0)=full, $(host_guid H-1)=full;
tenantB=0x0002 : $(host_guid H-2)=full, $(host_guid H-3)=full;
EOF
ctl() { "$IBSMCTL" -s "$sock" "$@"; }
pkeys() {	# HOST: the first two entries of its port's P_Key table
	on_host "$1" smpquery -D pkeys 0 2>&1 | sed -n 's/^ *0: *//p' | tr -s ' ' | cut -d' ' -f1-2
}
# answers PREFIX: "SRC->DST P_KEY" (or "none") for the pairs, asked from
# the source host, and each host's P_Key table, into PREFIX.sa
answers() {
	local q s d p r
	lids_tables "$1"
	lid() { sed -n "s/^$(host_guid "$1") //p" "$2.lids"; }
	for q in H-0:H-2 H-0:H-4 H-2:H-0 H-0:H-1 H-2:H-3; do
		IFS=: read -r s d <<<"$q"
		r=$(on_host "$s" saquery -p --slid "$(lid "$s" "$1")" --dlid "$(lid "$d" "$1")" 2>&1)
		p=$(sed -n 's/^\s*pkey\.*\(0x[0-9a-fA-F]*\)$/\1/p' <<<"$r" | head -n 1)
		[ -n "$p" ] && p=$(printf '0x%04x' "$p")
		echo "PR $s->$d ${p:-none}"
	done
	for s in H-0 H-2 H-4; do echo "pkeys $s $(pkeys "$s")"; done
	# the groups before any join, as H-0 sees them (3 records: one MAD)
	on_host H-0 saquery -g >"$1.mg" 2>&1
	awk '/MGID\.\.\./ { if (g != "") print g; g = "MG" }
	     /(MGID|Mtu|pkey|Rate|SL)\.\.\./ { k = $1; v = $1; sub(/\.+.*/, "", k);
		sub(/.*\.\./, "", v); g = g " " k "=" v }
	     END { if (g != "") print g }' "$1.mg" | sort
}

# ---- ibsmd, the default membership ----
sim_start "$net"
on_host_bg H-7 "$IBSMD" -c "$pol" -S "$SIM_TMP/state" -s "$sock" --log-level info >"$log" 2>&1
wait_up 20 "$log"
answers "$SIM_TMP/full" >"$SIM_TMP/full.sa"
want() { grep -qx "$2" "$1" || fail "$(basename "$1"): want '$2', have: $(tr '\n' ';' <"$1")"; }
want "$SIM_TMP/full.sa" "PR H-0->H-2 0xffff"	# no common tenant: the default
want "$SIM_TMP/full.sa" "PR H-0->H-4 0xffff"	# H-4 in no tenant
want "$SIM_TMP/full.sa" "PR H-0->H-1 0x8001"	# the tenant's own
want "$SIM_TMP/full.sa" "pkeys H-2 0xffff 0x8002"
want "$SIM_TMP/full.sa" "MG MGID=ff12:601b:ffff::2 Mtu=0x84 pkey=0xFFFF Rate=0x83 SL=0x0"
want "$SIM_TMP/full.sa" "MG MGID=ff12::1 Mtu=0x82 pkey=0x8001 Rate=0x83 SL=0x1"
pass "default membership full: hosts in no common tenant get P_Key 0xffff ($(grep -c '^PR' "$SIM_TMP/full.sa") PathRecords asked); the partitions' mgroups listed before any join"

# ---- reloaded: limited, the members as OpenSM's keywords ----
n=$(grep -c 'heavy sweep done' "$log")
cat >"$pol" <<EOF
default_partition: {membership: limited}
partitions:
  - {name: tenantA, pkey: 0x0001, members: ["$(host_guid H-0)=full", "$(host_guid H-1)=both", SELF=limited]}
  - {name: tenantB, pkey: 0x0002, members: ["H-2=full", "H-3=full", ALL_SWITCHES=full]}
EOF
ctl reload >/dev/null || fail "ibsmctl reload: $(ctl reload 2>&1)"
more_done() { [ "$(grep -c 'heavy sweep done' "$log")" -gt "$n" ]; }
wait_until 10 more_done || fail "no heavy sweep after the reload: $(tail -n 3 "$log")"
answers "$SIM_TMP/limited" >"$SIM_TMP/limited.sa"
want "$SIM_TMP/limited.sa" "PR H-0->H-2 none"
want "$SIM_TMP/limited.sa" "PR H-0->H-4 none"
want "$SIM_TMP/limited.sa" "PR H-0->H-1 0x8001"
want "$SIM_TMP/limited.sa" "PR H-2->H-3 0x8002"
want "$SIM_TMP/limited.sa" "pkeys H-2 0x7fff 0x8002"
grep -q 'MGID=ff12::1 ' "$SIM_TMP/limited.sa" && fail "tenantA's group outlived the policy: $(grep '^MG' "$SIM_TMP/limited.sa")"
grep -q 'matches no port' "$log" && fail "a keyword warned: $(grep 'matches no port' "$log" | head -n 2)"
pass "default_partition.membership limited (keywords, =full, =both): no PathRecord between hosts in no common tenant, hosts hold 0x7fff"
sim_stop

# ---- OpenSM, its shipped Default line and the same tenants ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$SIM_TMP/osm/opensm.conf"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-7 opensm -F "$SIM_TMP/osm/opensm.conf" -P "$SIM_TMP/partitions.conf" \
	-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
answers "$SIM_TMP/opensm" >"$SIM_TMP/opensm.sa"
sim_stop
diff "$SIM_TMP/full.sa" "$SIM_TMP/opensm.sa" >"$SIM_TMP/diff" ||
	fail "ibsmd's answers differ from OpenSM's: $(tr '\n' ';' <"$SIM_TMP/diff")"
pass "as OpenSM with Default=0x7fff, ipoib : ALL=full; and the tenants: $(grep -c . "$SIM_TMP/opensm.sa") answers the same"
