#!/bin/bash
# The SA within partitions (ibsmd(8) Subnet administration), beside OpenSM on
# a fresh ibsim of the same fabric and the same partitions: a 2-level tree of
# 16 hosts (H-0..H-3 on leaf L0-S0, ...), the SM on H-15, three tenants and a
# host in none:
#   tenantA 0x0001: H-0 H-4 H-8 H-12 full, H-3 limited
#   tenantB 0x0002: H-1 H-5 H-9 H-13 full, SL 2
#   tenantC 0x0003: H-2 H-6 H-10 H-14 H-7 full
#   H-11: none (a limited member of the default partition, as every host:
#   default_partition.membership limited)
# ibsmd gets them as `partitions:` in its policy, OpenSM as partitions.conf
# (Default=0x7fff: ALL=limited, SELF=full, ALL_SWITCHES=full; qos TRUE,
# without which OpenSM answers SL 0 for every partition).  From a
# host of tenant A (and from H-11): `saquery -p` between pairs (no record
# across tenants, the shared P_Key otherwise, with the full bit as the SA
# gives it), `saquery -p --pkey` (a P_Key asked for), NodeRecord and
# PortInfoRecord by LID (present or left out).  Every answer is compared
# with OpenSM's, and the expected ones are named.  Asked by LID: a GetTable
# of all records is cut to one MAD by ibsim (DEVELOPERS.md).  Then, of
# ibsmd alone: H-11 learns nothing of tenant A's H-0 (outsider()).
. "$(dirname "$0")/common.sh"
command -v opensm >/dev/null || fail "opensm is not installed (make deps)"
command -v saquery >/dev/null || fail "saquery is not installed (make deps)"

net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$net"
A="H-0 H-4 H-8 H-12" B="H-1 H-5 H-9 H-13" C="H-2 H-6 H-10 H-14 H-7"
yaml_list() { local n s=""; for n in "$@"; do s="$s${s:+, }\"$n\""; done; printf '%s' "$s"; }
cat >"$SIM_TMP/p.yaml" <<EOF
default_partition: {membership: limited}
partitions:
  - name: tenantA
    pkey: 0x0001
    members: [$(yaml_list $A), {node: "H-3", membership: limited}]
  - name: tenantB
    pkey: 0x0002
    sl: 2
    members: [$(yaml_list $B)]
  - name: tenantC
    pkey: 0x0003
    members: [$(yaml_list $C)]
EOF
osm_list() { local n s=""; for n in "$@"; do s="$s${s:+, }$(host_guid "$n")=full"; done; printf '%s' "$s"; }
cat >"$SIM_TMP/partitions.conf" <<EOF
Default=0x7fff : ALL=limited, SELF=full, ALL_SWITCHES=full;
tenantA=0x0001 : $(osm_list $A), $(host_guid H-3)=limited;
tenantB=0x0002, sl=2 : $(osm_list $B);
tenantC=0x0003 : $(osm_list $C);
EOF

declare -A LID
# names PREFIX: LID[name] of every switch and host from an ibnetdiscover dump
names() {
	sim_dump "$1" || fail "cannot dump the fabric"
	LID=()
	eval "$(sed -n -e 's/^Switch\s.*# "\([^"]*\)".*\blid \([0-9]*\) .*/LID[\1]=\2/p' \
		-e 's/^\[[0-9]*\]\s*"H-[0-9a-f]*"\[1\].*# "\(H-[0-9]*\)" lid \([0-9]*\) .*/LID[\1]=\2/p' \
		"$1.topo" | sort -u)"
	[ "${#LID[@]}" -eq 22 ] || fail "$1: ${#LID[@]} LIDs of 22 nodes in the dump"
}

# pr_of OUT: "P_Key SL" of a saquery -p answer (0x%04x %d), "none" without a record
pr_of() {
	local p l
	p=$(sed -n 's/^\s*pkey\.*\(0x[0-9a-fA-F]*\)$/\1/p' <<<"$1" | head -n 1)
	l=$(sed -n 's/^\s*sl\.\+\(0x[0-9a-fA-F]*\)$/\1/p' <<<"$1" | head -n 1)
	[ -n "$p" ] && printf '0x%04x %d\n' "$p" "$l" || echo none
}

# queries OUT: every answer of the SA (ibsmd's or OpenSM's) as "QUERY ANSWER"
queries() {
	local out=$1 s d n r
	{
		# PathRecords asked from H-0 (tenant A full) and H-11 (none)
		for q in H-0:H-0:H-4 H-0:H-0:H-3 H-0:H-3:H-0 H-0:H-0:H-1 H-0:H-0:H-7 \
			 H-0:H-0:H-11 H-0:H-0:H-15 H-0:H-15:H-0 H-0:H-1:H-5 \
			 H-11:H-11:H-15 H-11:H-11:H-0 H-11:H-4:H-8 H-1:H-1:H-5 H-1:H-1:H-15; do
			IFS=: read -r n s d <<<"$q"
			r=$(on_host "$n" saquery -p --slid "${LID[$s]}" --dlid "${LID[$d]}" 2>&1)
			echo "PR by $n $s->$d $(pr_of "$r")"
		done
		for q in H-0:H-4:0x0001 H-0:H-4:0x8001 H-0:H-4:0x0002 H-0:H-4:0xffff H-0:H-15:0xffff; do
			IFS=: read -r s d p <<<"$q"
			r=$(on_host H-0 saquery -p --slid "${LID[$s]}" --dlid "${LID[$d]}" --pkey "$p" 2>&1)
			echo "PR by H-0 $s->$d pkey $p $(pr_of "$r")"
		done
		# NodeRecords by LID from H-0: present or left out
		for n in "${!LID[@]}"; do
			r=$(on_host H-0 saquery NR "${LID[$n]}" 2>&1)
			grep -q 'NodeRecord dump' <<<"$r" && echo "NR by H-0 $n present" || echo "NR by H-0 $n absent"
		done
		for n in H-0 H-15 L0-S0 H-11; do
			r=$(on_host H-11 saquery NR "${LID[$n]}" 2>&1)
			grep -q 'NodeRecord dump' <<<"$r" && echo "NR by H-11 $n present" || echo "NR by H-11 $n absent"
		done
		for n in H-1 H-4; do
			r=$(on_host H-0 saquery PIR "${LID[$n]}/1" 2>&1)
			grep -q 'PortInfoRecord dump' <<<"$r" && echo "PIR by H-0 $n present" || echo "PIR by H-0 $n absent"
		done
	} | sort >"$out"
}

# gid_of H-N: the GID of host N's port, IPv6 style
gid_of() {
	local g=$(($(host_guid "$1")))
	printf 'fe80::%x:%x:%x:%x' $((g >> 48 & 0xffff)) $((g >> 32 & 0xffff)) \
		$((g >> 16 & 0xffff)) $((g & 0xffff))
}
NOBODY_GID=fe80::2:c9ff:dead:beef NOBODY_LID=200

# outsider: ibsmd only, beyond OpenSM (which answers an unknown GID
# ERR_REQ_INVALID_GID and another tenant's port with no record): H-11,
# in no tenant, gets the same PathRecord answers for tenant A's H-0 as
# for a GID and a LID no port has; H-4 (tenant A) gets H-0's path.
# (InformInfoRecord is left to test_sa_part: ibsm-listen claims IsSM
# under ibsim, and an IsSM port is a full member of the default
# partition, which every host shares.)
outsider() {
	local q a b
	for q in "--dgid GID" "--sgid GID" "--slid ${LID[H-11]} --dlid LID" "--dlid LID"; do
		a=$(on_host H-11 saquery -p $(sed -e "s/GID/$(gid_of H-0)/" -e "s/LID/${LID[H-0]}/" <<<"$q") 2>&1)
		b=$(on_host H-11 saquery -p $(sed -e "s/GID/$NOBODY_GID/" -e "s/LID/$NOBODY_LID/" <<<"$q") 2>&1)
		[ "$a" = "$b" ] ||
			fail "saquery -p $q from H-11: tenant A's H-0 '$(head -n 1 <<<"$a")', no port '$(head -n 1 <<<"$b")'"
	done
	a=$(on_host H-4 saquery -p --dgid "$(gid_of H-0)" 2>&1)
	grep -q "dgid\.*$(gid_of H-0)\$" <<<"$a" || fail "saquery -p --dgid H-0 from H-4: $(head -n 3 <<<"$a")"
	pass "ibsmd: H-11 (no tenant) gets the answers of no port for tenant A's H-0 (saquery -p by DGID, SGID: $(on_host H-11 saquery -p --dgid "$(gid_of H-0)" 2>&1 | sed -n 's/.*SA(\(.*\))$/\1/p'); by DLID: $(on_host H-11 saquery -p --dlid "${LID[H-0]}" 2>&1 | sed -n 's/.*SA(\(.*\))$/\1/p')); H-4 (tenant A) gets its path"
}

# ---- ibsmd ----
sim_start "$net"
on_host_bg H-15 "$IBSMD" -S "$SIM_TMP/state" -s "$SIM_TMP/ibsmd.sock" -c "$SIM_TMP/p.yaml" --log-level info >"$SIM_TMP/ibsmd.log" 2>&1
wait_until 30 grep -q '^subnet up:' "$SIM_TMP/ibsmd.log" ||
	fail "ibsmd: no subnet up: $(tail -n 3 "$SIM_TMP/ibsmd.log")"
names "$SIM_TMP/ibsmd"
queries "$SIM_TMP/ibsmd.sa"
outsider
sim_stop

# ---- OpenSM, on a fresh ibsim of the same fabric ----
sim_start "$net"
mkdir -p "$SIM_TMP/osm"
opensm -c "$SIM_TMP/osm/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
# qos TRUE: OpenSM answers a partition's sl= only with QoS on (osm_prtn_config.c
# sets it to 0 otherwise); ibsmd answers the policy's sl in every QoS mode
sed -i -e 's/^force_log_flush .*/force_log_flush TRUE/' -e 's/^qos .*/qos TRUE/' "$SIM_TMP/osm/opensm.conf"
grep -q '^qos TRUE' "$SIM_TMP/osm/opensm.conf" || fail "no qos option in opensm -c's file"
OSM_CACHE_DIR="$SIM_TMP/osm" OSM_TMP_DIR="$SIM_TMP/osm" \
	on_host_bg H-15 opensm -F "$SIM_TMP/osm/opensm.conf" -P "$SIM_TMP/partitions.conf" \
	-f "$SIM_TMP/osm/opensm.log" >"$SIM_TMP/osm/out" 2>&1
wait_until 60 grep -qs 'SUBNET UP' "$SIM_TMP/osm/opensm.log" || fail "OpenSM: no SUBNET UP"
names "$SIM_TMP/opensm"
queries "$SIM_TMP/opensm.sa"
sim_stop

I="$SIM_TMP/ibsmd.sa" O="$SIM_TMP/opensm.sa"
# what the partitions say, in ibsmd's answers
want() { grep -qx "$1" "$I" || fail "ibsmd: want '$1', have '$(grep -F "${1% *}" "$I")'"; }
want "PR by H-0 H-0->H-4 0x8001 0"	# tenant A, both full
want "PR by H-0 H-3->H-0 0x0001 0"	# the source's entry: H-3 limited
want "PR by H-1 H-1->H-5 0x8002 2"	# tenant B's SL
want "PR by H-0 H-0->H-1 none"		# tenants apart
want "PR by H-0 H-0->H-11 none"		# H-11 in no tenant
want "PR by H-0 H-0->H-15 0x7fff 0"	# the SM, a full default member
want "PR by H-0 H-1->H-5 none"		# the requester shares nothing with B
want "PR by H-0 H-0->H-4 pkey 0x0001 0x0001 0"	# asked for: as asked
want "PR by H-0 H-0->H-4 pkey 0x0002 none"
want "NR by H-0 H-4 present"
want "NR by H-0 H-1 absent"
want "NR by H-0 L1-S1 present"
pass "ibsmd: no PathRecord across tenants, the tenant's P_Key within; records within the requester's partitions ($(grep -c present "$I") present, $(grep -c absent "$I") left out, $(grep -c ' none$' "$I") PathRecords refused)"

diff "$I" "$O" >"$SIM_TMP/diff" || fail "answers differ from OpenSM's ($(grep -c '^<' "$SIM_TMP/diff") lines): $(head -n 8 "$SIM_TMP/diff")"
pass "every answer as OpenSM's with the same partitions: $(wc -l <"$I") queries ($(grep -c '^PR' "$I") PathRecords, $(grep -c '^NR' "$I") NodeRecords, $(grep -c '^PIR' "$I") PortInfoRecords)"
