#!/bin/bash
# make bench: ibsmd against OpenSM on the same ibsim fabrics, in the same run.
# Every run gets a fresh ibsim and fresh state/cache directories; the programs
# alternate; wall time is measured from outside (the whole process, to exit);
# MADs are counted the same way for both by tests/shims/maddrop.c in front of
# libumad2sim.so.  Ratios measured in one run are what count.
#
#   BENCH_ROUNDS=3        rounds per fabric and program (the median is shown)
#   BENCH_BIG=1           also the 11664-host 3-level tree (slow)
#   BENCH_ENGINE=...      ibsmd's -R (default ftree,minhop)
#   BENCH_ONLY=NAME       one fabric (ft2-324, ft3-3456, k18-5832, ft3-11664),
#                         or one row alone: "sa", "notices", "migration", "vlids",
#                         "qos", "part", "mcast", "mcast-emu", "perfmgr", "dftree",
#                         "jobs-offline", "jobs", "mkey" (ibsmd and OpenSM, M_Key off and on),
#                         "routing", "lft-order" (ibsmd alone, the emulator)
#   BENCH_SA_SECONDS=3    length of each PathRecord Get run (SA row)
#   BENCH_MC_INFLIGHT=16  each host's joins in flight (mcast row)
#   BENCH_MC_PROGS="ibsmd osm floor"  what the mcast row runs (floor: madsend echo)
#
# ceil_mps is what ibsim and umad2sim carry on this machine at that moment
# with no SM behind it (build/madflood: NodeInfo Gets to the leaf switch, 64 in
# flight); floor_ms is ibsmd's MAD count sent at that rate.
#
# Under umad2sim ibsmd keeps its MAD path on one CPU (mad.one_cpu, sm/base/cpu.h).
# So that the table shows what that placement alone is worth, OpenSM with
# max_wire_smps 64 also runs under `taskset -c 0` (osm64_1cpu); the ratios
# that count are against OpenSM as it ships (osm, osm64).
SIM_TEST=bench
. "$(dirname "$0")/sim/common.sh"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing"
MADFLOOD="$SIM_ROOT/build/madflood"
[ -x "$MADFLOOD" ] || fail "build/madflood is missing"
SAPERF="$SIM_ROOT/build/saperf"
EMUSA="$SIM_ROOT/build/emusa"
EMUVM="$SIM_ROOT/build/emuvm"
[ -x "$SAPERF" ] && [ -x "$EMUSA" ] && [ -x "$EMUVM" ] || fail "build/saperf, build/emusa or build/emuvm is missing"
ROUNDS=${BENCH_ROUNDS:-3}
ENGINE=${BENCH_ENGINE:-ftree,minhop}
RESULTS="$SIM_TMP/results"
: >"$RESULTS"
# What this run prints is also appended, dated, to tests/RESULTS.md when it
# ends well ("make bench, DATE, COMMIT"): the notebook stays current.
# BENCH_RECORD=0 leaves the file alone.
BENCH_OUT="$SIM_TMP/bench.out"
exec > >(tee "$BENCH_OUT")
# The QoS row: ibsmd's policy, and OpenSM's options for the same mapping
# (SL i -> VL i for i < 4, the other SLs on VL 0; equal weights on VLs 0-3,
# no high-priority VL).  No OpenSM policy file: /etc/opensm/qos-policy.conf
# is absent, which OpenSM takes as "the qos_* options alone".
QOS_YAML="$SIM_TMP/qos.yaml"
printf 'qos: {mode: vftree, max_vls: 4}\n' >"$QOS_YAML"
QOS_OSM=("qos TRUE" "qos_max_vls 4" "qos_high_limit 0"
	"qos_vlarb_high 0:0,1:0,2:0,3:0" "qos_vlarb_low 0:64,1:64,2:64,3:64"
	"qos_sl2vl 0,1,2,3,0,0,0,0,0,0,0,0,0,0,0,0")

# The partitions row (BENCH_ONLY=part): 8 tenant partitions over the hosts
# of the fabric, host N in tenant N % 10 when that is below 8 (the others in
# none), full members; hosts limited in the default partition.  ibsmd gets
# them as node-description patterns (PART_YAML), OpenSM as partitions.conf
# with the same port GUIDs (written by part_osm from the net file).
PART_YAML="$SIM_TMP/part.yaml"
{
	echo 'partitions:'
	for k in 0 1 2 3 4 5 6 7; do
		printf '  - {name: t%d, pkey: 0x%04x, members: ["H-*%d"]}\n' "$k" $((k + 1)) "$k"
	done
} >"$PART_YAML"
PART_OSM="$SIM_TMP/partitions.conf"
# The M_Key row (BENCH_ONLY=mkey): every port keyed, protection level 2,
# a 60 s lease (ibsmd's default lease_s).  OpenSM (osm-mkey) gets the same
# level and lease with one key for every port: 3.3.23 has no per-port key
# (m_key, m_key_protection_level, m_key_lease_period; opensm(8), "MKEY
# CONFIGURATION").
MKEY_YAML="$SIM_TMP/mkey.yaml"
printf 'security: {m_key: {protect_level: 2, lease_s: 60}}\n' >"$MKEY_YAML"
MKEY_OSM=("m_key 0x0123456789abcdef" "m_key_protection_level 2" "m_key_lease_period 60")
# part_osm NET: PART_OSM for the hosts of NET (an ibsim CA port's GUID is
# its node GUID + the port number)
part_osm() {
	python3 - "$1" >"$PART_OSM" <<'PY'
import re, sys
m = {k: [] for k in range(8)}
guid = None
for line in open(sys.argv[1]):
    if line.startswith('caguid='):
        guid = int(line.split('=')[1], 16)
    h = re.match(r'Hca\s+\d+\s+"H-(\d+)"', line)
    if h and int(h.group(1)) % 10 < 8:
        m[int(h.group(1)) % 10].append('0x%016x=full' % (guid + 1))
print('Default=0x7fff : ALL=limited, SELF=full, ALL_SWITCHES=full;')
for k in range(8):
    # one member per line: OpenSM reads partitions.conf in lines of 4 KB
    print('t%d=0x%04x :\n  %s;' % (k, k + 1, ',\n  '.join(m[k])))
PY
}
FABRICS=("ft2-324:ftree2 --radix 36" "ft3-3456:ftree3 --radix 24" "k18-5832:kary --k 18 --n 3")
[ -n "${BENCH_BIG:-}" ] && FABRICS+=("ft3-11664:ftree3 --radix 36")

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# count DIR KEY: a counter summed over the processes that wrote DIR/count.PID
count() { cat "$1"/count.* 2>/dev/null | awk -v k="$2" '$1 == k { n += $2 } END { print n + 0 }'; }
# stable DIR: wait until the MAD total counted in DIR stops changing for 1 s
stable() {
	local a b
	b=$(count "$1" total)
	while :; do
		sleep 1
		a=$(count "$1" total)
		[ "$a" = "$b" ] && break
		b=$a
	done
}
# attr_sets DIR ATTR: the Sets of SMP attribute ATTR (4 hex digits) counted in DIR
attr_sets() { count "$1" "class_0x81_method_0x02_attr_0x$2"; }
# all_sets DIR ATTR: the same, LID-routed (class 0x01) and directed (0x81)
all_sets() { echo $(( $(count "$1" "class_0x01_method_0x02_attr_0x$2") + $(attr_sets "$1" "$2") )); }

# timed PRELOAD CMD...: CMD as an ibsim client at H-0, its wall time in
# T_MS, its status in RC.  The environment is made before the clock starts:
# sim_preload runs ldd, which is the harness's time, not the program's.
timed() {
	local pre=$1 t0
	shift
	t0=${EPOCHREALTIME/./}
	(cd "$SIM_TMP" && LD_PRELOAD="$pre" SIM_HOST=H-0 exec "$@")
	RC=$?
	T_MS=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
}

# one_run NAME NET PROG ROUND: a fresh ibsim, one bring-up; appends
# "NAME PROG wall_ms mads rss_kb route_ms sl2vl_sets vlarb_sets pkey_sets" to $RESULTS.
# ibsmd-qos, osm-qos and osm64-qos: the QoS row's programs (QOS_YAML, QOS_OSM above);
# ibsmd-part and osm-part the partitions row's (PART_YAML, PART_OSM);
# ibsmd-mkey and osm-mkey the M_Key row's (MKEY_YAML, MKEY_OSM)
one_run() {
	local name=$1 net=$2 prog=$3 round=$4 dir="$SIM_TMP/$1-$3-$4" rc pre
	mkdir -p "$dir"
	sim_start "$net"
	export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0
	case $prog in
	ibsmd|ibsmd-qos|ibsmd-part|ibsmd-mkey)
		local conf=()
		[ "$prog" = ibsmd-qos ] && conf=(-c "$QOS_YAML")
		[ "$prog" = ibsmd-part ] && conf=(-c "$PART_YAML")
		[ "$prog" = ibsmd-mkey ] && conf=(-c "$MKEY_YAML")
		pre=$(SIM_EXTRA_PRELOAD="$SIM_MADDROP" sim_preload "$IBSMD")
		timed "$pre" /usr/bin/time -f "%M" -o "$dir/rss" \
			"$IBSMD" --once -R "$ENGINE" "${conf[@]}" -S "$dir/state" >"$dir/out" 2>"$dir/err"
		;;
	flood)	# the ceiling: NodeInfo Gets to the leaf switch, 64 in flight, no SM
		pre=$(sim_preload "$MADFLOOD")
		timed "$pre" /usr/bin/time -f "%M" -o "$dir/rss" \
			"$MADFLOOD" 100000 64 1 >"$dir/out" 2>"$dir/err"
		;;
	osm|osm64|osm64pin|osm-qos|osm64-qos|osm-part|osm-mkey)
		local part=()
		case $prog in
		osm)	: >"$dir/opensm.conf" ;;
		osm-part) : >"$dir/opensm.conf"; part=(-P "$PART_OSM") ;;
		osm-qos) printf '%s\n' "${QOS_OSM[@]}" >"$dir/opensm.conf" ;;
		osm-mkey) printf '%s\n' "${MKEY_OSM[@]}" >"$dir/opensm.conf" ;;
		osm64-qos) printf '%s\n' "${QOS_OSM[@]}" 'max_wire_smps 64' >"$dir/opensm.conf" ;;
		*)	printf 'max_wire_smps 64\n' >"$dir/opensm.conf" ;;
		esac
		local pin=""
		[ "$prog" = osm64pin ] && pin="taskset -c 0"
		pre=$(SIM_EXTRA_PRELOAD="$SIM_MADDROP" sim_preload opensm)
		OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
			timed "$pre" /usr/bin/time -f "%M" -o "$dir/rss" $pin \
			opensm -o -R ftree -F "$dir/opensm.conf" "${part[@]}" -f "$dir/opensm.log" \
			>"$dir/out" 2>"$dir/err"
		;;
	esac
	rc=$RC
	unset MADDROP_COUNT MADDROP_EVERY
	sim_stop
	[ "$rc" -eq 0 ] || fail "$name $prog round $round exited $rc: $(tail -n 3 "$dir/err")"
	local route=- rss
	rss=$(tail -n 1 "$dir/rss")
	[ "${prog%-*}" = ibsmd ] && route=$(grep -o 'route_ms=[0-9]*' "$dir/out" | tail -n 1 | cut -d= -f2)
	[ "$prog" = flood ] && route=$(grep -o '[0-9]* MADs/s' "$dir/out" | cut -d' ' -f1)
	echo "$name $prog $T_MS $(count "$dir" total) $rss $route $(all_sets "$dir" 0017) $(all_sets "$dir" 0018) $(all_sets "$dir" 0016)" >>"$RESULTS"
	note "$name $prog round $round: $T_MS ms, $(count "$dir" total) MADs"
}

# link_spread NAME NET: the verifier's max/min routes per switch-to-switch
# link of ibsmd's tables on NET (--offline, same engine), as "max/min".
link_spread() {
	"$IBSMD" --offline "$2" -R "$ENGINE" --verify -S "$SIM_TMP/$1-offline" 2>/dev/null |
		awk '$1 == "all" && $3 == "links:" { gsub(",", ""); print $5 "/" $7; exit }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "-") }'; }
col() {	# NAME PROG COLUMN
	awk -v n="$1" -v p="$2" -v c="$3" '$1 == n && $2 == p { print $c }' "$RESULTS" | median
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }'; }
# floor_ms MADS CEIL: ms to send MADS at CEIL MADs/s
floor_ms() { awk -v m="$1" -v c="$2" 'BEGIN { if (c > 0) printf "%d", m * 1000 / c; else print "-" }'; }

for spec in "${FABRICS[@]}"; do
	name=${spec%%:*}
	[ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != "$name" ] && continue
	net="$SIM_TMP/$name.net"
	gen ${spec#*:} -o "$net"
	echo "$name spread $(link_spread "$name" "$net")" >>"$RESULTS"
	for r in $(seq "$ROUNDS"); do
		for prog in flood ibsmd osm osm64 osm64pin; do
			one_run "$name" "$net" "$prog" "$r"
		done
	done
done

if [ -s "$RESULTS" ]; then
echo
echo "bring-up under ibsim, median of $ROUNDS rounds ($(date -u +%F), $(nproc) cores); ibsmd -R $ENGINE, OpenSM -R ftree"
printf '%-10s %9s %9s %9s %7s %7s %10s %10s %7s %9s %9s %11s %9s %8s %10s %7s\n' fabric ibsmd_ms osm_ms osm64_ms vs_osm vs_64 ibsmd_mads osm_mads mads_x route_ms rss_kb links_max/min ceil_mps floor_ms osm64_1cpu vs_1cpu
for spec in "${FABRICS[@]}"; do
	name=${spec%%:*}
	[ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != "$name" ] && continue
	iw=$(col "$name" ibsmd 3); ow=$(col "$name" osm 3); o6=$(col "$name" osm64 3)
	im=$(col "$name" ibsmd 4); om=$(col "$name" osm 4)
	ceil=$(col "$name" flood 6)	# MADs/s ibsim + umad2sim carry with no SM
	floor=$(floor_ms "$im" "$ceil")
	op=$(col "$name" osm64pin 3)
	spread=$(awk -v n="$name" '$1 == n && $2 == "spread" { print $3 }' "$RESULTS")
	printf '%-10s %9s %9s %9s %7s %7s %10s %10s %7s %9s %9s %11s %9s %8s %10s %7s\n' "$name" "$iw" "$ow" "$o6" \
		"$(ratio "$iw" "$ow")" "$(ratio "$iw" "$o6")" "$im" "$om" "$(ratio "$im" "$om")" \
		"$(col "$name" ibsmd 6)" "$(col "$name" ibsmd 5)" "${spread:--}" "$ceil" "$floor" \
		"$op" "$(ratio "$iw" "$op")"
done
fi

# ---- events on one fabric: an unchanged heavy sweep, one link failure ----
EV=${BENCH_EVENT_FABRIC:-ft3-3456}
evspec=""
for spec in "${FABRICS[@]}"; do [ "${spec%%:*}" = "$EV" ] && evspec=${spec#*:}; done
if [ -n "$evspec" ] && { [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = "$EV" ]; }; then
	net="$SIM_TMP/$EV.net"
	[ -e "$net" ] || gen $evspec -o "$net"
	# the first leaf's first link to a switch
	leaf=$(awk '/^Switch/ { gsub(/"/, "", $3); sw = $3 } /^\[[0-9]+\]\t"L[1-9]/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print sw, $1; exit }' "$net")
	link="\"${leaf% *}\"[${leaf#* }]"

	dir="$SIM_TMP/ev-ibsmd"; mkdir -p "$dir"
	sim_start "$net"
	export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
	SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -S "$dir/state" \
		-s "$dir/sock" >"$dir/out" 2>"$dir/err"
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	ups() { [ "$(grep -c '^subnet up' "$dir/out")" -ge "$1" ]; }
	wait_until 120 ups 1 || fail "events: ibsmd did not come up"
	stable "$dir"; a_tot=$(count "$dir" total); a_set=$(count "$dir" set)
	# $ROUNDS unchanged heavy sweeps; MADs and Sets over all of them
	for r in $(seq "$ROUNDS"); do
		"$IBSMCTL" -s "$dir/sock" sweep --heavy >/dev/null
		wait_until 60 ups $((r + 1)) || fail "events: no heavy sweep $r"
		stable "$dir"
	done
	b_tot=$(count "$dir" total); b_set=$(count "$dir" set); b_lft=$(attr_sets "$dir" 0019)
	sim_cmd "Unlink $link" >/dev/null
	wait_until 60 ups $((ROUNDS + 2)) || fail "events: no sweep after Unlink $link"
	stable "$dir"; c_tot=$(count "$dir" total); c_lft=$(attr_sets "$dir" 0019)
	sweep_ms() { grep '^subnet up' "$dir/out" | sed -n "$1p" | grep -o 'sweep_ms=[0-9]*' | cut -d= -f2; }
	s1=$(sweep_ms 1)
	s2=$(for r in $(seq "$ROUNDS"); do sweep_ms $((r + 1)); done | median)
	s3=$(sweep_ms $((ROUNDS + 2)))
	repair=$(grep -o 'routes repaired.*' "$dir/err" | head -n 1)
	stop_sm() { kill "$SIM_LAST_PID" 2>/dev/null; wait "$SIM_LAST_PID" 2>/dev/null; }
	stop_sm	# before ibsim goes, so that it does not sweep a dead simulator
	sim_stop

	dir="$SIM_TMP/ev-osm"; mkdir -p "$dir"
	sim_start "$net"
	export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
	: >"$dir/opensm.conf"
	OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		on_host_bg H-0 opensm -R ftree -F "$dir/opensm.conf" -f "$dir/opensm.log" \
		>"$dir/out" 2>&1
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	# OpenSM's log is buffered: MASTER state, then its MADs stop
	wait_until 300 grep -q 'Entering MASTER state' "$dir/out" || fail "events: OpenSM did not come up"
	sleep 1
	stable "$dir"; oa_tot=$(count "$dir" total); oa_lft=$(attr_sets "$dir" 0019)
	sim_cmd "Unlink $link" >/dev/null
	sleep 2
	stable "$dir"; oc_tot=$(count "$dir" total); oc_lft=$(attr_sets "$dir" 0019)
	stop_sm
	sim_stop

	echo
	echo "events on $EV (ibsmd -R $ENGINE, OpenSM -R ftree with its defaults)"
	echo "  ibsmd bring-up sweep: ${s1} ms; unchanged heavy sweep (median of $ROUNDS): ${s2} ms ($(ratio "$s2" "$s1") of the bring-up), $(( (b_tot - a_tot) / ROUNDS )) MADs each, $((b_set - a_set)) Sets in all"
	echo "  link failure (Unlink $link): ibsmd ${s3} ms, $((c_tot - b_tot)) MADs, $((c_lft - b_lft)) LFT blocks written;" \
		"OpenSM $((oc_tot - oa_tot)) MADs, $((oc_lft - oa_lft)) LFT blocks written"
	[ -n "$repair" ] && echo "  ibsmd: $repair"
fi

# ---- failover on one fabric: the master is SIGKILLed, the standby takes over ----
# Both SMs poll every second and give up after 2 missed polls (ibsmd sm.poll_ms
# 1000 / poll_retries 2; OpenSM sminfo_polling_timeout 1000 /
# polling_retry_number 2), so the detection time is the same; what differs
# is the takeover sweep: time from the kill to the standby's subnet up, the
# MADs the standby sends, and the LFT blocks it writes to a fabric whose
# routes were right.
if [ -n "$evspec" ] && { [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = "$EV" ]; }; then
	net="$SIM_TMP/$EV.net"
	[ -e "$net" ] || gen $evspec -o "$net"
	fo_counted() {	# DIR HOST CMD...: CMD in the background, its MADs counted in DIR
		local d=$1 h=$2
		shift 2
		export MADDROP_COUNT="$d/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
		SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg "$h" "$@"
		unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	}
	fo_kill() { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

	dir="$SIM_TMP/fo-ibsmd"; mkdir -p "$dir/m" "$dir/s"
	printf 'sm: {priority: 10, poll_ms: 1000, poll_retries: 2}\n' >"$dir/m.yaml"
	printf 'sm: {priority: 5, poll_ms: 1000, poll_retries: 2}\n' >"$dir/s.yaml"
	sim_start "$net"
	on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$dir/m.yaml" -S "$dir/m/state" -s "$dir/m/sock" \
		>"$dir/m/out" 2>"$dir/m/err"
	master=$SIM_LAST_PID
	wait_until 120 grep -q '^subnet up' "$dir/m/out" || fail "failover: ibsmd master did not come up"
	fo_counted "$dir/s" H-1 "$IBSMD" -R "$ENGINE" -c "$dir/s.yaml" -S "$dir/s/state" \
		-s "$dir/s/sock" >"$dir/s/out" 2>"$dir/s/err"
	standby=$SIM_LAST_PID
	sb() { "$IBSMCTL" -s "$dir/s/sock" status 2>/dev/null | grep -q '^state: STANDBY'; }
	wait_until 60 sb || fail "failover: the second ibsmd is not STANDBY"
	# a standby polls every second: its count never stands still
	sleep 2; fa_tot=$(count "$dir/s" total); fa_lft=$(attr_sets "$dir/s" 0019)
	t0=${EPOCHREALTIME/./}
	fo_kill "$master"
	wait_until 120 grep -q '^subnet up' "$dir/s/out" || fail "failover: the standby did not take over"
	fi_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	stable "$dir/s"; fb_tot=$(count "$dir/s" total); fb_lft=$(attr_sets "$dir/s" 0019)
	fi_sweep=$(grep -o 'sweep_ms=[0-9]*' "$dir/s/out" | head -n 1 | cut -d= -f2)
	fo_kill "$standby"
	sim_stop

	dir="$SIM_TMP/fo-osm"; mkdir -p "$dir/m" "$dir/s"
	# SUBNET UP goes to the log file only (level INFO), flushed on request
	printf 'sm_priority 10\nsminfo_polling_timeout 1000\npolling_retry_number 2\nforce_log_flush TRUE\n' >"$dir/m.conf"
	printf 'sm_priority 5\nsminfo_polling_timeout 1000\npolling_retry_number 2\nforce_log_flush TRUE\n' >"$dir/s.conf"
	sim_start "$net"
	OSM_CACHE_DIR="$dir/m" OSM_TMP_DIR="$dir/m" on_host_bg H-0 opensm -R ftree \
		-F "$dir/m.conf" -f "$dir/m/opensm.log" >"$dir/m/out" 2>&1
	master=$SIM_LAST_PID
	wait_until 300 grep -qs 'SUBNET UP' "$dir/m/opensm.log" || fail "failover: OpenSM master did not come up"
	OSM_CACHE_DIR="$dir/s" OSM_TMP_DIR="$dir/s" fo_counted "$dir/s" H-1 opensm -R ftree \
		-F "$dir/s.conf" -f "$dir/s/opensm.log" >"$dir/s/out" 2>&1
	standby=$SIM_LAST_PID
	wait_until 120 grep -q 'Entering STANDBY state' "$dir/s/out" || fail "failover: OpenSM standby not STANDBY"
	sleep 2; oa_tot=$(count "$dir/s" total); oa_lft=$(attr_sets "$dir/s" 0019)
	t0=${EPOCHREALTIME/./}
	fo_kill "$master"
	wait_until 300 grep -qs 'SUBNET UP' "$dir/s/opensm.log" || fail "failover: the OpenSM standby did not take over"
	fo_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	stable "$dir/s"; ob_tot=$(count "$dir/s" total); ob_lft=$(attr_sets "$dir/s" 0019)
	fo_kill "$standby"
	sim_stop

	echo
	echo "failover on $EV (master SIGKILLed; standbys poll every 1000 ms, 2 misses; ibsmd -R $ENGINE, OpenSM -R ftree)"
	echo "  kill to subnet up: ibsmd ${fi_ms} ms (takeover sweep ${fi_sweep} ms), OpenSM ${fo_ms} ms: $(ratio "$fi_ms" "$fo_ms")"
	echo "  the new master's MADs: ibsmd $((fb_tot - fa_tot)), OpenSM $((ob_tot - oa_tot)): $(ratio $((fb_tot - fa_tot)) $((ob_tot - oa_tot)));" \
		"LFT blocks written: ibsmd $((fb_lft - fa_lft)), OpenSM $((ob_lft - oa_lft))"
fi

# ---- QoS: the 3456-host tree brought up with SL2VL and VLArb tables ----
# ibsmd --once with qos {mode: vftree, max_vls: 4} (-c QOS_YAML) and OpenSM
# -R ftree with `qos TRUE` and QOS_OSM's options, each on a fresh ibsim of
# the same fabric, alternating, $ROUNDS rounds (OpenSM also with
# max_wire_smps 64, osm64); the same without QoS (ibsmd's default mode
# none, OpenSM's defaults) as the reference.  SL2VL
# (0x0017) and VLArb (0x0018) Sets counted by libmaddrop, LID-routed and
# directed.  Then the ibsmd daemon with the same policy: a heavy sweep with
# nothing changed (`ibsmctl sweep --heavy` after the first subnet up) must
# write no SL2VL or VLArb table.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = qos ]; then
	name=qos-ft3-3456
	net="$SIM_TMP/$name.net"
	gen ftree3 --radix 24 -o "$net"
	for r in $(seq "$ROUNDS"); do
		for prog in flood ibsmd-qos osm-qos osm64-qos ibsmd osm osm64; do
			one_run "$name" "$net" "$prog" "$r"
		done
	done

	dir="$SIM_TMP/qos-heavy"; mkdir -p "$dir"
	sim_start "$net"
	export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
	SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$QOS_YAML" \
		-S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	qsm=$SIM_LAST_PID
	qos_ups() { [ "$(grep -c '^subnet up' "$dir/out")" -ge "$1" ]; }
	wait_until 120 qos_ups 1 || fail "qos: the ibsmd daemon did not come up"
	stable "$dir"
	qa_sl=$(all_sets "$dir" 0017); qa_arb=$(all_sets "$dir" 0018); qa_tot=$(count "$dir" total)
	qa_set=$(count "$dir" set)
	"$IBSMCTL" -s "$dir/sock" sweep --heavy >/dev/null || fail "qos: ibsmctl sweep --heavy"
	wait_until 60 qos_ups 2 || fail "qos: no heavy sweep"
	stable "$dir"
	qb_sl=$(all_sets "$dir" 0017); qb_arb=$(all_sets "$dir" 0018); qb_tot=$(count "$dir" total)
	qb_set=$(count "$dir" set)
	qh_ms=$(grep '^subnet up' "$dir/out" | sed -n 2p | grep -o 'sweep_ms=[0-9]*' | cut -d= -f2)
	kill "$qsm" 2>/dev/null; wait "$qsm" 2>/dev/null
	sim_stop
	qh_w=$((qb_sl - qa_sl + qb_arb - qa_arb))

	echo
	echo "QoS: $name bring-up under ibsim, median of $ROUNDS rounds ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg));"
	echo "  ibsmd --once -R $ENGINE -c with qos {mode: vftree, max_vls: 4}; OpenSM -o -R ftree with ${QOS_OSM[*]}"
	echo "  (osm64: the same and max_wire_smps 64; none: ibsmd's default qos mode none, OpenSM's defaults, qos FALSE)"
	ceil=$(col "$name" flood 6)
	printf '%-6s %9s %9s %9s %7s %7s %10s %10s %7s %11s %9s %11s %9s %8s\n' qos ibsmd_ms osm_ms osm64_ms \
		vs_osm vs_64 ibsmd_mads osm_mads mads_x ibsmd_sl2vl osm_sl2vl ibsmd_vlarb osm_vlarb floor_ms
	for q in vftree none; do
		i=ibsmd o=osm o6=osm64
		[ "$q" = vftree ] && i=ibsmd-qos o=osm-qos o6=osm64-qos
		iw=$(col "$name" "$i" 3); ow=$(col "$name" "$o" 3); o6w=$(col "$name" "$o6" 3)
		im=$(col "$name" "$i" 4); om=$(col "$name" "$o" 4)
		printf '%-6s %9s %9s %9s %7s %7s %10s %10s %7s %11s %9s %11s %9s %8s\n' "$q" "$iw" "$ow" "$o6w" \
			"$(ratio "$iw" "$ow")" "$(ratio "$iw" "$o6w")" "$im" "$om" "$(ratio "$im" "$om")" \
			"$(col "$name" "$i" 7)" "$(col "$name" "$o" 7)" "$(col "$name" "$i" 8)" "$(col "$name" "$o" 8)" \
			"$(floor_ms "$im" "$ceil")"
	done
	echo "  (floor_ms: ibsmd's MADs at the ${ceil} MADs/s ibsim + umad2sim carry with no SM, build/madflood)"
	echo "  ibsmd daemon, the same policy: bring-up $qa_tot MADs ($qa_sl SL2VL, $qa_arb VLArb Sets);" \
		"unchanged heavy sweep ${qh_ms} ms, $((qb_tot - qa_tot)) MADs, SL2VL+VLArb tables written: $qh_w," \
		"Sets of any attribute: $((qb_set - qa_set))"
	[ "$qh_w" -eq 0 ] || fail "qos: an unchanged heavy sweep wrote $qh_w SL2VL/VLArb tables"
	[ "$((qb_set - qa_set))" -eq 0 ] || fail "qos: an unchanged heavy sweep sent $((qb_set - qa_set)) Sets"
fi

# ---- partitions: P_Key tables at bring-up, beside OpenSM ----
# ibsmd --once -R $ENGINE -c PART_YAML and OpenSM -o -R ftree -P PART_OSM on
# fresh ibsims of the same fabric, alternating; P_Key Sets (0x0016) counted.
# Then the daemon: a heavy sweep with nothing changed writes no P_Key table.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = part ]; then
	name=part-ft3-3456
	net="$SIM_TMP/$name.net"
	gen ftree3 --radix 24 -o "$net"
	part_osm "$net"
	for r in $(seq "$ROUNDS"); do
		for prog in ibsmd-part osm-part; do
			one_run "$name" "$net" "$prog" "$r"
		done
	done
	dir="$SIM_TMP/part-heavy"; mkdir -p "$dir"
	sim_start "$net"
	export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
	SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$PART_YAML" \
		-S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
	unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
	psm=$SIM_LAST_PID
	part_ups() { [ "$(grep -c '^subnet up' "$dir/out")" -ge "$1" ]; }
	wait_until 120 part_ups 1 || fail "part: the ibsmd daemon did not come up"
	stable "$dir"
	pa_pk=$(all_sets "$dir" 0016); pa_set=$(count "$dir" set)
	"$IBSMCTL" -s "$dir/sock" sweep --heavy >/dev/null || fail "part: ibsmctl sweep --heavy"
	wait_until 60 part_ups 2 || fail "part: no heavy sweep"
	stable "$dir"
	pb_pk=$(all_sets "$dir" 0016); pb_set=$(count "$dir" set)
	ph_ms=$(grep '^subnet up' "$dir/out" | sed -n 2p | grep -o 'sweep_ms=[0-9]*' | cut -d= -f2)
	kill "$psm" 2>/dev/null; wait "$psm" 2>/dev/null
	sim_stop

	echo
	echo "Partitions: $name bring-up under ibsim, median of $ROUNDS rounds ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg));"
	echo "  8 tenant partitions (host N in t(N%10) below 8), hosts limited in the default;"
	echo "  ibsmd --once -R $ENGINE -c part.yaml; OpenSM -o -R ftree -P partitions.conf (the same GUIDs)"
	iw=$(col "$name" ibsmd-part 3); ow=$(col "$name" osm-part 3)
	im=$(col "$name" ibsmd-part 4); om=$(col "$name" osm-part 4)
	printf '%-5s %9s %9s %7s %10s %10s %7s %11s %9s\n' part ibsmd_ms osm_ms vs_osm ibsmd_mads osm_mads mads_x \
		ibsmd_pkey osm_pkey
	printf '%-5s %9s %9s %7s %10s %10s %7s %11s %9s\n' 8 "$iw" "$ow" "$(ratio "$iw" "$ow")" "$im" "$om" \
		"$(ratio "$im" "$om")" "$(col "$name" ibsmd-part 9)" "$(col "$name" osm-part 9)"
	echo "  ibsmd daemon, the same policy: bring-up $pa_pk P_Key Sets; unchanged heavy sweep ${ph_ms} ms," \
		"P_Key Sets $((pb_pk - pa_pk)), Sets of any attribute $((pb_set - pa_set))"
	[ "$((pb_pk - pa_pk))" -eq 0 ] || fail "part: an unchanged heavy sweep wrote $((pb_pk - pa_pk)) P_Key tables"
	[ "$((pb_set - pa_set))" -eq 0 ] || fail "part: an unchanged heavy sweep sent $((pb_set - pa_set)) Sets"
fi

# ---- join storm: nine hosts join 201 multicast groups at once, beside OpenSM ----
# The 3456-host tree on a fresh ibsim per SM: the ibsmd daemon (-R $ENGINE)
# or the OpenSM daemon (-R ftree, its defaults) on H-0, MADs counted by
# libmaddrop.  Once the subnet is up and the SM quiet, nine hosts spread
# over the fabric (MC_HOSTS: 9 clients + the SM = ibsim's 10) each run one
# build/mcjoin, its port opened beforehand, sending from the same moment
# (--at, 2 s after the launch): the broadcast group, then 200 groups
# MC_PREFIX + 0..199 (the same MGIDs on all nine: the first join creates,
# 9 members each), Q_Key 0x0B1B for all, BENCH_MC_INFLIGHT in flight.
# join_ms: the common start to the last answer (max of mcjoin's
# last_answer); mft_ms: to the last change of the SM's MFT Set count
# (0x001B; the counts file is rewritten every 2 ms while they move: the
# time is that file's mtime when the count was seen to change) before it
# stands for 3 s; mft_sets: MFT Sets from the start.  Then ibnetdiscover and `dump_fts -M`
# of every switch from H-1, judged by mcast_check.py for 3 groups (the
# broadcast one, the first and the last of the 200: each exactly the nine
# hosts); the row fails when ibsmd's trees are wrong.
# floor_join: the same storm answered by no SM at all -- ibsmd brings the
# subnet up and stops, and `madsend echo` on H-0 sends every join back at
# once as its own answer: what ibsim, umad2sim and the nine clients cost
# (no SM can answer the storm faster under ibsim).  *_above: each SM's
# join_ms minus that floor, and their ratio (vs_above).
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = mcast ]; then
	name=mc-ft3-3456
	net="$SIM_TMP/$name.net"
	gen ftree3 --radix 24 -o "$net"
	MCJOIN="$SIM_ROOT/build/mcjoin"
	MCAST_CHECK="$SIM_ROOT/tests/sim/mcast_check.py"
	[ -x "$MCJOIN" ] || fail "build/mcjoin is missing"
	MC_HOSTS=(H-7 H-391 H-775 H-1159 H-1543 H-1927 H-2311 H-2695 H-3079)
	MC_BCAST=ff12:401b:ffff::ffff:ffff
	MC_PREFIX=ff15::1:0
	MC_K=${BENCH_MC_INFLIGHT:-16}
	mc_sets() { all_sets "$1" 001b; }
	# mc_quiet DIR T0 SETS0: poll the MFT Sets until they stand for 3 s; the
	# ms from T0 (EPOCHREALTIME without its dot) to their last change in
	# MFT_MS ("-" when they stayed at SETS0)
	mc_quiet() {
		local d=$1 t0=$2 n last=$3 now seen at=
		seen=${EPOCHREALTIME/./}
		while :; do
			sleep 0.1
			now=${EPOCHREALTIME/./}
			n=$(mc_sets "$d")
			if [ "$n" != "$last" ]; then
				last=$n seen=$now
				at=$(stat -c %.6Y "$d"/count.* | sort -n | tail -n 1)
				at=${at/./}
			elif [ $((now - seen)) -ge 3000000 ]; then
				break
			fi
		done
		MFT_MS=-
		[ -n "$at" ] && MFT_MS=$(( (at - t0) / 1000 ))
	}
	mc_run() {	# PROG ROUND: appends "mc PROG join_ms mft_ms mft_sets check" to $RESULTS
		local prog=$1 dir="$SIM_TMP/mc-$1-$2" h pids=() t0 s0 at last late l sm mlids=() g verdict
		mkdir -p "$dir"
		sim_start "$net"
		export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=2
		if [ "$prog" != osm ]; then
			SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -S "$dir/state" \
				-s "$dir/sock" >"$dir/out" 2>"$dir/err"
			sm=$SIM_LAST_PID
			wait_until 120 grep -q '^subnet up' "$dir/out" || fail "mcast: ibsmd did not come up"
		else
			opensm -c "$dir/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
			sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$dir/opensm.conf"
			OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
				on_host_bg H-0 opensm -R ftree -F "$dir/opensm.conf" -f "$dir/opensm.log" \
				>"$dir/out" 2>&1
			sm=$SIM_LAST_PID
			wait_until 300 grep -qs 'SUBNET UP' "$dir/opensm.log" || fail "mcast: OpenSM did not come up"
		fi
		unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
		stable "$dir"
		if [ "$prog" = floor ]; then
			# the floor: the SM gone (the ports keep its LID as their SM's),
			# `madsend echo` on its port answering every join at once
			kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
			on_host_bg H-0 "$SIM_ROOT/build/madsend" echo 30 >"$dir/echo" 2>&1
			sm=$SIM_LAST_PID
			sleep 1
		fi
		s0=$(mc_sets "$dir")
		t0=$(( ${EPOCHREALTIME/./} + 2000000 ))
		at="${t0:0:-6}.${t0: -6}"
		for h in "${MC_HOSTS[@]}"; do
			on_host "$h" "$MCJOIN" -T 5000 -k "$MC_K" --at "$at" join --mgid "$MC_BCAST" \
				--count 200 --prefix "$MC_PREFIX" --qkey 0x0b1b >"$dir/$h.out" 2>&1 &
			pids+=($!)
		done
		for l in "${pids[@]}"; do
			wait "$l" || fail "mcast: a join against $prog failed: $(grep -h -v '"ok"' "$dir"/H-*.out | head -n 3)"
		done
		last=$(sed -n 's/.*"last_answer":\([0-9.]*\).*/\1/p' "$dir"/H-*.out | sort -n | tail -n 1)
		late=$(sed -n 's/.*"started":\([0-9.]*\).*/\1/p' "$dir"/H-*.out | sort -n | tail -n 1)
		{ [ -n "$last" ] && [ -n "$late" ]; } || fail "mcast: no mcjoin summary against $prog"
		late=$(awk -v a="$t0" -v b="$late" 'BEGIN { printf "%d", b * 1000 - a / 1000 }')
		[ "$late" -le 20 ] || note "mcast $prog round $2: a host started $late ms late"
		if [ "$prog" = floor ]; then
			echo "mc floor $(awk -v a="$t0" -v b="$last" 'BEGIN { printf "%d", b * 1000 - a / 1000 }') - - -" >>"$RESULTS"
			note "mcast floor round $2: $(tail -n 1 "$RESULTS")"
			kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
			sim_stop
			return
		fi
		mc_quiet "$dir" "$t0" "$s0"
		# the sampled groups' MLIDs, from H-7's answers
		mlids+=("$(json_mlid "$MC_BCAST" "$dir/H-7.out")")
		mlids+=("$(json_mlid "ff15::1:0" "$dir/H-7.out")")
		mlids+=("$(json_mlid "ff15::1:c7" "$dir/H-7.out")")
		on_host H-1 ibnetdiscover >"$dir/topo" 2>"$dir/diag.err" || fail "mcast: ibnetdiscover: $(tail -n 2 "$dir/diag.err")"
		on_host H-1 dump_fts -M -n >"$dir/mft" 2>>"$dir/diag.err" || fail "mcast: dump_fts -M: $(tail -n 2 "$dir/diag.err")"
		local args=()
		for g in "${mlids[@]}"; do args+=(--group "$g=$(IFS=,; echo "${MC_HOSTS[*]}")"); done
		verdict=ok
		python3 "$MCAST_CHECK" check --topo "$dir/topo" --mft "$dir/mft" --ignore-others "${args[@]}" \
			>"$dir/check" 2>&1 || verdict=wrong
		echo "mc $prog $(awk -v a="$t0" -v b="$last" 'BEGIN { printf "%d", b * 1000 - a / 1000 }')" \
			"$MFT_MS $(( $(mc_sets "$dir") - s0 )) $verdict" >>"$RESULTS"
		note "mcast $prog round $2: $(tail -n 1 "$RESULTS"); groups ${mlids[*]}"
		kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
		sim_stop
		if [ "$prog" = ibsmd ] && [ "$verdict" != ok ]; then
			fail "mcast: ibsmd's trees are wrong ($dir/check): $(grep -m 3 FAIL "$dir/check")"
		fi
	}
	# json_mlid MGID FILE: the MLID of MGID's answer in mcjoin's output
	json_mlid() { grep -m 1 "\"mgid\":\"$1\"" "$2" | sed -n 's/.*"mlid":"\([^"]*\)".*/\1/p'; }
	for r in $(seq "$ROUNDS"); do
		for p in ${BENCH_MC_PROGS:-ibsmd osm floor}; do mc_run "$p" "$r"; done
	done
	echo
	echo "join storm on ft3-3456 under ibsim, median of $ROUNDS rounds ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)):"
	echo "  9 hosts each join $MC_BCAST and 200 groups $MC_PREFIX+0..199 from the same moment, $MC_K in flight (1809 joins, 201 groups of 9);"
	echo "  ibsmd daemon -R $ENGINE, OpenSM daemon -R ftree; trees of 3 groups judged by mcast_check.py (dump_fts -M)"
	printf '%-6s %9s %9s %9s %9s %7s %7s %10s %10s %6s %6s %10s %11s %9s %8s\n' mcast ibsmd_join osm_join \
		ibsmd_mft osm_mft vs_join vs_mft ibsmd_sets osm_sets trees osm_tr floor_join \
		ibsmd_above osm_above vs_above
	ij=$(col mc ibsmd 3); oj=$(col mc osm 3); im=$(col mc ibsmd 4); om=$(col mc osm 4)
	fj=$(col mc floor 3)
	above() { awk -v a="$1" -v f="$2" 'BEGIN { if (a != "" && a != "-" && f != "" && f != "-") print a - f; else print "-" }'; }
	ia=$(above "$ij" "$fj"); oa=$(above "$oj" "$fj")
	printf '%-6s %9s %9s %9s %9s %7s %7s %10s %10s %6s %6s %10s %11s %9s %8s\n' 201 "$ij" "$oj" "$im" "$om" \
		"$(ratio "$ij" "$oj")" "$(ratio "$im" "$om")" "$(col mc ibsmd 5)" "$(col mc osm 5)" \
		"$(awk '$1 == "mc" && $2 == "ibsmd" { print $6 }' "$RESULTS" | sort -u | paste -sd/)" \
		"$(awk '$1 == "mc" && $2 == "osm" { print $6 }' "$RESULTS" | sort -u | paste -sd/)" \
		"${fj:--}" "$ia" "$oa" "$(ratio "$ia" "$oa")"
fi

# ---- routing alone: ibsmd --offline on the big trees (no fabric, no MADs) ----
if [ -z "${BENCH_ONLY:-}" ]; then
	gen ftree3 --radix 36 -o "$SIM_TMP/ft3-11664.net"
	gen kary --k 12 --n 4 -o "$SIM_TMP/k12n4.net"
	echo
	echo "ibsmd --offline -R $ENGINE --verify (route_ms: the engine alone; verify: the route check)"
	printf '%-22s %9s %10s %10s %13s\n' fabric route_ms verify_ms rss_kb links_max/min
	for f in ft3-11664 k12n4; do
		/usr/bin/time -f "%M" -o "$SIM_TMP/$f.off.rss" "$IBSMD" --offline "$SIM_TMP/$f.net" \
			-R "$ENGINE" --verify -S "$SIM_TMP/$f-off-state" >"$SIM_TMP/$f.off" 2>&1 ||
			fail "--offline $f failed: $(tail -n 3 "$SIM_TMP/$f.off")"
		printf '%-22s %9s %10s %10s %13s\n' \
			"$f ($(grep -o 'cas=[0-9]*' "$SIM_TMP/$f.off" | cut -d= -f2) hosts)" \
			"$(grep -o 'route_ms=[0-9]*' "$SIM_TMP/$f.off" | cut -d= -f2)" \
			"$(sed -n 's/.*(\([0-9]*\) ms)$/\1/p' "$SIM_TMP/$f.off" | tail -n 1)" \
			"$(tail -n 1 "$SIM_TMP/$f.off.rss")" \
			"$(awk '$1 == "all" && $3 == "links:" { gsub(",", ""); print $5 "/" $7; exit }' "$SIM_TMP/$f.off")"
	done
fi

# ---- the emulated 20736-host 4-level 12-ary tree ----
if [ -z "${BENCH_ONLY:-}" ]; then
	t0=$(now_ms)
	/usr/bin/time -f "%M" -o "$SIM_TMP/k12n4.rss" "$IBSMD" --emulate "$SIM_TMP/k12n4.net" --once \
		-R "$ENGINE" -S "$SIM_TMP/k12n4-state" >"$SIM_TMP/k12n4.out" 2>"$SIM_TMP/k12n4.err" ||
		fail "emulated 20736-host bring-up failed: $(tail -n 3 "$SIM_TMP/k12n4.err")"
	echo
	echo "emulated 20736-host 4-level 12-ary tree: $(( $(now_ms) - t0 )) ms wall, peak RSS $(tail -n 1 "$SIM_TMP/k12n4.rss") KB"
	echo "  $(grep '^subnet up' "$SIM_TMP/k12n4.out")"
fi

# ---- the SA: PathRecord Gets under ibsim beside OpenSM; a GetTable at 11664 hosts ----
# (a) build/saperf on H-3: single-record PathRecord Gets (SLID its own LID,
# DLID every end port's LID in turn), 16 in flight, for BENCH_SA_SECONDS,
# against ibsmd and against OpenSM on fresh ibsims of the same fabric,
# alternating, $ROUNDS rounds each (median).  Both SMs number the 360 end
# ports 1..360; saperf fails on any query not answered with its record.
# (b) build/emusa: ibsmd's code on the emulated 11664-host tree, a GetTable
# of every PathRecord from one host until the whole RMPP answer is in, and
# the same Gets in-process.  ibsmd only: ibsim carries no RMPP (it cuts a
# GetTable answer to one MAD), so OpenSM's GetTable cannot be timed there.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = sa ]; then
	SA_SECS=${BENCH_SA_SECONDS:-3}
	net="$SIM_TMP/sa-ft2-324.net"
	gen ftree2 --radix 36 -o "$net"
	sa_field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }
	sa_run() {	# PROG ROUND: appends "sa PROG qps latency_ms" to $RESULTS
		local prog=$1 dir="$SIM_TMP/sa-$1-$2" out
		mkdir -p "$dir"
		sim_start "$net"
		if [ "$prog" = ibsmd ]; then
			on_host_bg H-0 "$IBSMD" -R "$ENGINE" -S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
			wait_until 120 grep -q '^subnet up' "$dir/out" || fail "SA: ibsmd did not come up"
		else
			: >"$dir/opensm.conf"
			OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" on_host_bg H-0 opensm -R ftree \
				-F "$dir/opensm.conf" -f "$dir/opensm.log" >"$dir/out" 2>&1
			wait_until 300 grep -q 'Entering MASTER state' "$dir/out" || fail "SA: OpenSM did not come up"
		fi
		local sm=$SIM_LAST_PID
		# the SA answers once the subnet is up (OpenSM: after MASTER)
		wait_until 60 on_host H-3 "$SAPERF" -n 1 -d 360 >/dev/null 2>&1 || fail "SA: $prog's SA does not answer"
		out=$(on_host H-3 "$SAPERF" -k 16 -t "$SA_SECS" -d 1-360 2>"$dir/saperf.err") ||
			fail "SA: saperf against $prog: $out $(tail -n 3 "$dir/saperf.err")"
		echo "sa $prog $(sa_field qps "$out") $(sa_field latency_ms_avg "$out")" >>"$RESULTS"
		note "SA $prog round $2: $out"
		kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
		sim_stop
	}
	for r in $(seq "$ROUNDS"); do
		sa_run ibsmd "$r"
		sa_run osm "$r"
	done
	si=$(col sa ibsmd 3); so=$(col sa osm 3)
	gen ftree3 --radix 36 -o "$SIM_TMP/sa-ft3-11664.net"
	emu=$("$EMUSA" -R "$ENGINE" -n "$ROUNDS" -k 16 -t "$SA_SECS" "$SIM_TMP/sa-ft3-11664.net" \
		2>"$SIM_TMP/emusa.err") || fail "emusa failed: $emu $(tail -n 3 "$SIM_TMP/emusa.err")"
	echo
	echo "SA: PathRecord Gets from H-3 on ft2-324 under ibsim, 16 in flight, ${SA_SECS} s, median of $ROUNDS rounds"
	printf '%-10s %10s %10s %7s %14s %12s\n' fabric ibsmd_qps osm_qps vs_osm ibsmd_lat_ms osm_lat_ms
	printf '%-10s %10s %10s %7s %14s %12s\n' ft2-324 "$si" "$so" "$(ratio "$si" "$so")" \
		"$(col sa ibsmd 4)" "$(col sa osm 4)"
	echo "SA on the emulated 11664-host tree (build/emusa; ibsmd only: ibsim carries no RMPP, OpenSM's GetTable cannot be timed)"
	echo "  GetTable of all $(sa_field records "$emu") PathRecords from one host ($(sa_field segments "$emu") RMPP segments):" \
		"$(sa_field gettable_ms_median "$emu") ms (median of $ROUNDS, least $(sa_field gettable_ms_min "$emu") ms);" \
		"PathRecord Gets in-process: $(sa_field get_qps "$emu")/s"
	echo "  $emu"
fi

# ---- perfmgr: every port's counters of the 3456-host tree, beside OpenSM's ----
# (a) A fresh ibsim of ft3-3456 per run.  Each program is asked for three
# sweeps, one at a time, and both are timed and counted the same way from
# outside: from just before the ask to the last PerfMgt (class 0x04) GMP the
# program wrote (libmaddrop's last_us_class_0x04), the GMPs and the
# PortCounters Gets (the ports read) counted by libmaddrop.  The third sweep
# is the steady one shown; the first asks each agent's ClassPortInfo (ibsmd
# reads the counters in the same sweep, OpenSM from its second on).  Both
# read PortCounters and PortCountersExtended of every switch port 1..N and
# every CA port.
#   ibsmd: the daemon with perfmgr.interval_s 0, `ibsmctl --json perfmgr
#   sweep` (its reply's ms, its sweep's start to its last answer, beside).
#   OpenSM: --perfmgr with perfmgr_sweep_time_s 3600 and -s 0 (no timer
#   sweep, no light sweep), each sweep asked with `perfmgr sweep` on its
#   loopback console (--console loopback) once the console has prompted,
#   perfmgr_max_outstanding_queries 64 (ibsmd's perfmgr.window); osm_1cpu
#   is the same under `taskset -c 0`, as ibsmd keeps its MAD path on one
#   CPU under umad2sim (mad.one_cpu).  With the default 500 OpenSM's first
#   sweep hangs under ibsim: once a run, OpenSM as it ships is asked for
#   one sweep, and the row says where it stopped and what ibsim then burns
#   (DEVELOPERS.md, the ibsim section, says why).
# $ROUNDS rounds each, alternating, the median.
# (b) ibsmd alone: build/saperf's PathRecord rate from H-3 (16 in flight,
# BENCH_SA_SECONDS) with no sweep, then with sweeps asked back to back
# throughout; the goal is the same rate within noise (the GMPs go through
# their own transaction table and window).
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = perfmgr ]; then
	PM_SECS=${BENCH_SA_SECONDS:-3}
	PM_OSM_WINDOW=64
	net="$SIM_TMP/pm-ft3-3456.net"
	gen ftree3 --radix 24 -o "$net"
	pm_field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" <<<"$2" | head -n 1; }
	gmps_of() { cat "$1"/count.* 2>/dev/null | awk '$1 ~ /^class_0x04_method_0x0[12]$/ { n += $2 } END { print n + 0 }'; }
	pcs_of() { count "$1" class_0x04_method_0x01_attr_0x0012; }
	last_of() { cat "$1"/count.* 2>/dev/null | awk '$1 == "last_us_class_0x04" { print $2 }' | sort -n | tail -n 1; }
	# pm_quiet DIR FROM SECS: wait until DIR's GMPs are past FROM and have
	# not moved for 300 ms (libmaddrop rewrites the counts every 20 ms)
	pm_quiet() {
		local n=0 a b=-1 still=0
		while [ "$n" -lt $(($3 * 10)) ]; do
			sleep 0.1
			n=$((n + 1))
			a=$(gmps_of "$1")
			if [ "$a" -gt "$2" ] && [ "$a" = "$b" ]; then
				still=$((still + 1))
				[ "$still" -ge 3 ] && return 0
			else
				still=0
			fi
			b=$a
		done
		return 1
	}
	# cpu_ticks PID: user + system clock ticks of PID so far
	cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
	# osm_console PORT: fd 3 on OpenSM's loopback console, once it prompts
	osm_console() {
		local i prompt
		for i in $(seq 50); do
			exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null && break
			sleep 0.1
		done
		read -r -t 10 -d '$' -u 3 prompt || fail "perfmgr: no OpenSM console prompt"
	}
	# pm_ask PROG DIR SOCK_OR_PORT: one sweep asked and timed; sets PM_MS,
	# PM_GMPS, PM_PORTS (PortCounters Gets) and PM_OWN (ibsmd's reply's ms)
	pm_ask() {
		local c0 p0 t0 out
		c0=$(gmps_of "$2")
		p0=$(pcs_of "$2")
		PM_OWN=-
		if [ "$1" = ibsmd ]; then
			t0=${EPOCHREALTIME/./}
			out=$("$IBSMCTL" -s "$3" --json perfmgr sweep) || fail "perfmgr: $out"
			PM_OWN=$(pm_field ms "$out")
			pm_quiet "$2" "$c0" 10 || fail "perfmgr: ibsmd's GMPs did not settle"
		else
			osm_console "$3"
			t0=${EPOCHREALTIME/./}
			printf 'perfmgr sweep\n' >&3
			pm_quiet "$2" "$c0" 60 || fail "perfmgr: OpenSM's sweep did not end ($(( $(gmps_of "$2") - c0 )) GMPs)"
			exec 3>&-
		fi
		PM_MS=$(( ($(last_of "$2") - t0) / 1000 ))
		PM_GMPS=$(( $(gmps_of "$2") - c0 ))
		PM_PORTS=$(( $(pcs_of "$2") - p0 ))
	}
	# osm_start DIR WINDOW [CMD...]: OpenSM on H-0 (pid in $SIM_LAST_PID),
	# its console port in OSM_PORT; WINDOW perfmgr_max_outstanding_queries,
	# "-" as it ships; CMD in front of it (taskset)
	osm_start() {
		local dir=$1 window=$2
		shift 2
		opensm -c "$dir/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
		sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$dir/opensm.conf"
		[ "$window" = - ] ||
			sed -i "s/^perfmgr_max_outstanding_queries .*/perfmgr_max_outstanding_queries $window/" "$dir/opensm.conf"
		OSM_PORT=$(free_port)
		export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=20
		OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$@" opensm -R ftree -s 0 \
			--perfmgr --perfmgr_sweep_time_s 3600 --console loopback -C "$OSM_PORT" \
			-F "$dir/opensm.conf" -f "$dir/opensm.log" >"$dir/out" 2>&1
		unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
		wait_until 300 grep -qs 'SUBNET UP' "$dir/opensm.log" || fail "perfmgr: OpenSM did not come up"
	}
	pm_run() {	# PROG ROUND: appends "pm PROG ms gmps first_ms ports first_gmps own_ms" to $RESULTS
		local prog=$1 dir="$SIM_TMP/pm-$1-$2" sm first first_g to
		mkdir -p "$dir"
		sim_start "$net"
		if [ "$prog" = ibsmd ]; then
			printf 'perfmgr:\n  interval_s: 0\n' >"$dir/pol.yaml"
			export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=20
			SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$dir/pol.yaml" \
				-S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
			unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
			sm=$SIM_LAST_PID
			wait_until 120 grep -q '^subnet up' "$dir/out" || fail "perfmgr: ibsmd did not come up"
			to="$dir/sock"
		elif [ "$prog" = osm_1cpu ]; then
			osm_start "$dir" "$PM_OSM_WINDOW" taskset -c 0
			sm=$SIM_LAST_PID
			to=$OSM_PORT
		else
			osm_start "$dir" "$PM_OSM_WINDOW"
			sm=$SIM_LAST_PID
			to=$OSM_PORT
		fi
		pm_ask "$prog" "$dir" "$to"
		first=$PM_MS first_g=$PM_GMPS
		pm_ask "$prog" "$dir" "$to"
		pm_ask "$prog" "$dir" "$to"
		echo "pm $prog $PM_MS $PM_GMPS $first $PM_PORTS $first_g $PM_OWN" >>"$RESULTS"
		note "perfmgr $prog round $2: first sweep $first ms $first_g GMPs; steady $PM_MS ms $PM_GMPS GMPs $PM_PORTS ports (own ms $PM_OWN)"
		if [ "$prog" = ibsmd ] && [ "$2" = 1 ]; then
			local q0 q1 l
			q0=$(on_host H-3 "$SAPERF" -k 16 -t "$PM_SECS" -d 1-3456 2>"$dir/sa0.err") || fail "perfmgr: saperf: $q0"
			( while :; do "$IBSMCTL" -s "$dir/sock" perfmgr sweep >/dev/null 2>&1 || break; done ) &
			l=$!
			q1=$(on_host H-3 "$SAPERF" -k 16 -t "$PM_SECS" -d 1-3456 2>"$dir/sa1.err") || fail "perfmgr: saperf during sweeps: $q1"
			kill "$l" 2>/dev/null; wait "$l" 2>/dev/null
			echo "pmsa idle $(pm_field qps "$q0")" >>"$RESULTS"
			echo "pmsa sweeping $(pm_field qps "$q1")" >>"$RESULTS"
			note "perfmgr SA: idle $q0; sweeping $q1"
		fi
		kill "$sm" 2>/dev/null
		wait_pid "$sm" 10 || kill -9 "$sm" 2>/dev/null
		wait "$sm" 2>/dev/null
		sim_stop
	}
	# pm_shipped: OpenSM as it ships (perfmgr_max_outstanding_queries 500)
	# asked for one sweep; appends "pmship GMPS CPIS IBSIM_CPU_PCT": the GMPs
	# and ClassPortInfo Gets it wrote until they stopped, ibsim's CPU for 5 s
	# after that
	pm_shipped() {
		local dir="$SIM_TMP/pm-osm-shipped" sm c0 g k0 k1
		mkdir -p "$dir"
		sim_start "$net"
		osm_start "$dir" -
		sm=$SIM_LAST_PID
		c0=$(gmps_of "$dir")
		osm_console "$OSM_PORT"
		printf 'perfmgr sweep\n' >&3
		pm_quiet "$dir" "$c0" 30 || fail "perfmgr: OpenSM as shipped sent no GMP"
		g=$(( $(gmps_of "$dir") - c0 ))
		k0=$(cpu_ticks "$SIM_PID")
		sleep 5
		k1=$(cpu_ticks "$SIM_PID")
		echo "pmship $g $(count "$dir" class_0x04_method_0x01_attr_0x0001) $(( (k1 - k0) * 100 / $(getconf CLK_TCK) / 5 ))" >>"$RESULTS"
		exec 3>&-
		# hung, it ends only on SIGKILL; ibsim, its write refused, goes on
		kill -9 "$sm" 2>/dev/null
		wait "$sm" 2>/dev/null
		sim_stop
	}
	for r in $(seq "$ROUNDS"); do
		pm_run ibsmd "$r"
		pm_run osm "$r"
		pm_run osm_1cpu "$r"
	done
	pm_shipped
	pi=$(col pm ibsmd 3); po=$(col pm osm 3)
	echo
	echo "perfmgr: one sweep of every port's counters on ft3-3456 under ibsim, from the ask to the last GMP written," \
		"median of $ROUNDS rounds (steady: the third sweep; first: the first, with ClassPortInfo)"
	p1=$(col pm osm_1cpu 3)
	printf '%-10s %12s %9s %9s %7s %7s %12s %7s %8s %10s %9s %12s\n' fabric ports ibsmd_ms ibsmd_gmp osm_ms osm_gmp \
		osm_1cpu_ms vs_osm vs_1cpu ibsmd_own first_ms first_gmps
	printf '%-10s %12s %9s %9s %7s %7s %12s %7s %8s %10s %9s %12s\n' ft3-3456 "$(col pm ibsmd 6)/$(col pm osm 6)" "$pi" \
		"$(col pm ibsmd 4)" "$po" "$(col pm osm 4)" "$p1" "$(ratio "$pi" "$po")" "$(ratio "$pi" "$p1")" "$(col pm ibsmd 8)" \
		"$(col pm ibsmd 5)/$(col pm osm 5)" "$(col pm ibsmd 7)/$(col pm osm 7)"
	read -r _ sg scpi scpu < <(grep '^pmship ' "$RESULTS")
	if [ "$scpi" -ge "$(col pm osm 7)" ]; then
		echo "OpenSM as it ships (perfmgr_max_outstanding_queries 500): its first sweep ended ($scpi ClassPortInfo Gets), not hung this time"
	else
		echo "OpenSM as it ships (perfmgr_max_outstanding_queries 500) hangs: its first sweep stopped after $sg GMPs" \
			"($scpi ClassPortInfo Gets of $(col pm osm 7)), ibsim then at ${scpu}% of a CPU; the row's OpenSM runs with $PM_OSM_WINDOW"
	fi
	a=$(awk '$1 == "pmsa" && $2 == "idle" { print $3 }' "$RESULTS" | tail -n 1)
	b=$(awk '$1 == "pmsa" && $2 == "sweeping" { print $3 }' "$RESULTS" | tail -n 1)
	echo "SA PathRecord Gets from H-3 on ft3-3456 (16 in flight, ${PM_SECS} s): ${a}/s idle, ${b}/s during perfmgr sweeps ($(ratio "$b" "$a") of idle)"
fi

# ---- dftree: the hot-spot loop's cost on the 3456-host tree (ibsmd alone) ----
# A fresh ibsim of ft3-3456, ibsmd with congestion.mode dftree and a 2 s
# interval (the performance manager's own sweep off, so only dFtree's GMPs
# count).  After three quiet rounds: the GMPs of a round (status
# congestion.gmps / rounds: PortCounters of every host port and of the
# switch port facing it, PortCountersExtended of every host port) and its
# time; then the console sets H-5's switch port and H-1's port over the
# threshold (H-1 at a tenth of its link) and the time from that command to
# the repath's log line is taken, $ROUNDS times (the median; at most one
# interval plus one round by design).  OpenSM has no counterpart.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = dftree ]; then
	net="$SIM_TMP/dft-ft3-3456.net"
	gen ftree3 --radix 24 -o "$net"
	dir="$SIM_TMP/dft"; mkdir -p "$dir"
	printf 'perfmgr:\n  interval_s: 0\ncongestion:\n  mode: dftree\n  interval_s: 2\n' >"$dir/pol.yaml"
	sim_start "$net"
	on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$dir/pol.yaml" -S "$dir/state" -s "$dir/sock" \
		--log-level info >"$dir/out" 2>"$dir/err"
	sm=$SIM_LAST_PID
	wait_until 120 grep -q '^subnet up' "$dir/out" || fail "dftree: ibsmd did not come up"
	dft() { "$IBSMCTL" -s "$dir/sock" --json status | python3 -c 'import json,sys; c = json.load(sys.stdin)["congestion"]; print(c["rounds"], c["gmps"], c["last_ms"])'; }
	wait_until 30 eval '[ "$(dft | cut -d" " -f1)" -ge 3 ]' || fail "dftree: no rounds"
	read -r rounds gmps round_ms < <(dft)
	read -r sw swp < <(awk '/^Switch/ { gsub(/"/, "", $3); s = $3 }
		/^\[[0-9]+\][ \t]+"H-5"\[1\]/ { sub(/\].*/, "", $1); sub(/\[/, "", $1); print s, $1; exit }' "$net")
	[ -n "$sw" ] || fail "dftree: no switch port facing H-5"
	lat=()
	wait_v=0 data_v=0
	for r in $(seq "$ROUNDS"); do
		n=$(grep -c 'dftree: repath to' "$dir/err")
		t0=$(date +%s%3N)
		# 1,000 ticks a ms at both ports, H-1 at a tenth of its 4X SDR link
		# (25,000 double words a ms), until the repath leaves
		while [ "$(grep -c 'dftree: repath to' "$dir/err")" -le "$n" ]; do
			ms=$(( $(date +%s%3N) - t0 ))
			[ "$ms" -lt 15000 ] || fail "dftree: no repath in round $r"
			sim_cmd "PerformanceSet \"$sw\"[$swp] PortCounters.PortXmitWait=$((wait_v + ms * 1000))" >/dev/null
			sim_cmd "PerformanceSet \"H-1\"[1] PortCounters.PortXmitWait=$((wait_v + ms * 1000))" >/dev/null
			sim_cmd "PerformanceSet \"H-1\"[1] PortCountersExtended.PortXmitData=$((data_v + ms * 25000))" >/dev/null
			sleep 0.05
		done
		wait_v=$((wait_v + ms * 1000)) data_v=$((data_v + ms * 25000))
		t1=$(grep 'dftree: repath to' "$dir/err" | sed -n "$((n + 1))p" | cut -d' ' -f1)
		lat+=("$(python3 -c 'import sys, datetime; print(int(datetime.datetime.fromisoformat(sys.argv[1]).timestamp() * 1000) - int(sys.argv[2]))' "$t1" "$t0")")
		# quiet again: the hot-spot clears before the next round
		wait_until 10 eval '[ "$(grep -c "dftree: hot-spot .* cleared" "$dir/err")" -ge '"$r"' ]' ||
			fail "dftree: the hot-spot did not clear"
	done
	kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
	sim_stop
	med=$(printf '%s\n' "${lat[@]}" | median)
	echo
	echo "dftree: the hot-spot loop on ft3-3456 under ibsim (interval 2 s; ibsmd alone, OpenSM has none)"
	printf '%-10s %12s %10s %16s\n' fabric gmps_round round_ms crossing_to_69_ms
	printf '%-10s %12s %10s %16s\n' ft3-3456 "$((gmps / rounds))" "$round_ms" "$med"
	echo "dft ibsmd $((gmps / rounds)) $round_ms $med" >>"$RESULTS"
fi

# ---- multicast join storm in the emulator (build/emumc; ibsmd alone) ----
# Every host of the 3456-host tree joins the IPoIB broadcast group and 4
# more groups at once, each from its own emulated port (5 Sets in flight
# per host), PathRecord Gets meanwhile; then the same storm over 200 groups
# joined before it, with the trees kept between runs and (-A) recomputed
# every run.  emumc exits non-zero when a tree read back is wrong.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = mcast-emu ]; then
	EMUMC="$SIM_ROOT/build/emumc"
	[ -x "$EMUMC" ] || fail "build/emumc is missing"
	mc_net="$SIM_TMP/mcemu-ft3-3456.net"
	gen ftree3 --radix 24 -o "$mc_net"
	mc_field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }
	echo
	echo "Multicast join storm on the emulated 3456-host tree (build/emumc, ibsmd only)"
	printf '%-22s %7s %9s %9s %7s %5s %6s %8s %10s %10s\n' case joins join_ms mft_ms mft_smps runs trees plan_ms pr_lat_avg pr_lat_max
	for mc_case in "5 groups:" "5 + 200 kept:-P 200" "5 + 200 recomputed:-P 200 -A"; do
		mc_out=$("$EMUMC" -R "$ENGINE" ${mc_case#*:} "$mc_net" 2>"$SIM_TMP/emumc.err") ||
			fail "emumc ${mc_case#*:} failed: $mc_out $(tail -n 3 "$SIM_TMP/emumc.err")"
		note "emumc ${mc_case#*:}: $mc_out"
		printf '%-22s %7s %9s %9s %7s %5s %6s %8s %10s %10s\n' "${mc_case%%:*}" \
			"$(mc_field joins "$mc_out")" "$(mc_field join_answered_ms "$mc_out")" \
			"$(mc_field mft_complete_ms "$mc_out")" "$(mc_field mft_smps "$mc_out")" \
			"$(mc_field mcast_runs "$mc_out")" "$(mc_field trees_computed "$mc_out")" \
			"$(mc_field plan_ms "$mc_out")" "$(mc_field pr_latency_ms_avg "$mc_out")" \
			"$(mc_field pr_latency_ms_max "$mc_out")"
	done
fi

# ---- ordered LFT writes in the emulator (build/emuorder; ibsmd alone) ----
# The 3456-host tree routed with ftree, a spine's cable taken down (the
# routes repaired), then a full reroute (ibsmctl reroute) timed from the
# request to the SM idle again: with ftree again (the reroute after a
# topology change), and with minhop and updn (a reload that changes the
# engine: most entries change).  Each with the LFT order
# (sm/write/plan_lft.h) and with the same writes in one wave, as before
# the order (-U).  BENCH_ROUNDS rounds each, medians.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = lft-order ]; then
	EMUORDER="$SIM_ROOT/build/emuorder"
	[ -x "$EMUORDER" ] || fail "build/emuorder is missing"
	lo_net="$SIM_TMP/lftorder-ft3-3456.net"
	gen ftree3 --radix 24 -o "$lo_net"
	lo_field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }
	echo
	echo "Full reroute of the emulated 3456-host tree after a cable went (build/emuorder, ibsmd only)"
	printf '%-8s %-9s %10s %8s %9s %6s %8s %10s %7s\n' reroute writes reroute_ms plan_ms lft_sets waves drained entries ratio
	# the two writers alternate round by round, so that a change in the
	# machine's load falls on both alike
	for lo_eng in ftree minhop updn; do
		declare -A lo_ms=() lo_pms=() lo_last=()
		for _ in $(seq "$ROUNDS"); do
			for lo_mode in one-wave ordered; do
				flag=; [ "$lo_mode" = one-wave ] && flag=-U
				lo_out=$("$EMUORDER" $flag -R ftree -E "$lo_eng" "$lo_net" 2>"$SIM_TMP/emuorder.err") ||
					fail "emuorder $flag -E $lo_eng failed: $lo_out $(tail -n 3 "$SIM_TMP/emuorder.err")"
				note "emuorder $flag -E $lo_eng: $lo_out"
				lo_ms[$lo_mode]+="$(lo_field reroute_ms "$lo_out") "
				lo_pms[$lo_mode]+="$(lo_field plan_ms "$lo_out") "
				lo_last[$lo_mode]=$lo_out
			done
		done
		one=
		for lo_mode in one-wave ordered; do
			lo_out=${lo_last[$lo_mode]}
			m=$(printf '%s\n' ${lo_ms[$lo_mode]} | median)
			pm=$(printf '%s\n' ${lo_pms[$lo_mode]} | median)
			[ "$lo_mode" = one-wave ] && one=$m
			printf '%-8s %-9s %10s %8s %9s %6s %8s %10s %7s\n' "$lo_eng" "$lo_mode" "$m" "$pm" \
				"$(lo_field lft_sets "$lo_out")" "$(lo_field waves "$lo_out")" \
				"$(lo_field drained "$lo_out")" "$(lo_field entries "$lo_out")" \
				"$([ "$lo_mode" = ordered ] && ratio "$m" "$one")"
			echo "lftorder $lo_eng $lo_mode $m $(lo_field lft_sets "$lo_out") $(lo_field waves "$lo_out")" >>"$RESULTS"
		done
		unset lo_ms lo_pms lo_last
	done
	echo "(ratio: ordered / one wave; goal for the reroute after a topology change: at most 1.5)"
fi

# ---- notices: a host's cable pulled, the trap 65 at a subscribed host ----
# ibsm-listen on H-1 subscribes to trap 65 with the SM (ibsmd or OpenSM, on
# fresh ibsims of ft2-324); the Unlink of H-7's cable is timed to the
# listener's JSON line (its "time", taken on receipt).
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = notices ]; then
	net="$SIM_TMP/nt-ft2-324.net"
	gen ftree2 --radix 36 -o "$net"
	nt_run() {	# PROG ROUND: appends "notice PROG ms" to $RESULTS
		local prog=$1 dir="$SIM_TMP/nt-$1-$2" t0 t65
		mkdir -p "$dir"
		sim_start "$net"
		if [ "$prog" = ibsmd ]; then
			on_host_bg H-0 "$IBSMD" -R "$ENGINE" -S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
			wait_until 120 grep -q '^subnet up' "$dir/out" || fail "notices: ibsmd did not come up"
		else
			opensm -c "$dir/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
			sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$dir/opensm.conf"
			OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" on_host_bg H-0 opensm -R ftree \
				-F "$dir/opensm.conf" -f "$dir/opensm.log" >"$dir/out" 2>&1
			wait_until 300 grep -qs 'SUBNET UP' "$dir/opensm.log" || fail "notices: OpenSM did not come up"
		fi
		local sm=$SIM_LAST_PID
		on_host_bg H-1 "$LISTEN" --trap 65 --count 1 --timeout 30 >"$dir/listen.out" 2>"$dir/listen.err"
		local l=$SIM_LAST_PID
		wait_until 20 grep -q 'subscribed with the SM' "$dir/listen.err" ||
			fail "notices: ibsm-listen did not subscribe with $prog"
		t0=$(date +%s.%N)
		sim_cmd 'Unlink "H-7"[1]' >/dev/null
		wait_pid "$l" 30 || fail "notices: no trap 65 from $prog"
		t65=$(sed -n 's/.*"time":\([0-9.]*\).*/\1/p' "$dir/listen.out")
		[ -n "$t65" ] || fail "notices: $prog: $(cat "$dir/listen.out")"
		echo "notice $prog $(awk -v a="$t0" -v b="$t65" 'BEGIN { printf "%.1f", (b - a) * 1000 }')" >>"$RESULTS"
		kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
		sim_stop
	}
	for r in $(seq "$ROUNDS"); do
		nt_run ibsmd "$r"
		nt_run osm "$r"
	done
	ni=$(col notice ibsmd 3); no=$(col notice osm 3)
	echo
	echo "notices: Unlink of H-7's cable to the trap 65 at ibsm-listen on H-1, ft2-324 under ibsim, median of $ROUNDS rounds"
	printf '%-10s %10s %10s %7s\n' fabric ibsmd_ms osm_ms vs_osm
	printf '%-10s %10s %10s %7s\n' ft2-324 "$ni" "$no" "$(ratio "$ni" "$no")"
fi

# ---- migration: one VM moved to a hypervisor on another leaf ----
# A fabric of hypervisors (fabgen hyper: 8 leaves, 4 spines, 4 vSwitches a
# leaf, each a PF, 4 VFs and one spare port).  ibsmd: `ibsmctl vm migrate
# --prepare`, then `--commit` timed from the command's start until
# `smpquery -L nodeinfo VMLID` from H-3 is answered by the destination VF's
# node (polled); its LFT blocks as the reply counts them (physical switches;
# vSwitch blocks apart) and as libmaddrop counts its LFT Sets.  OpenSM can
# move a VM only as a re-cabling: ibsim `Unlink` of the VF's port, `Link` of
# that HCA to the destination vSwitch's spare port, and OpenSM's reroute;
# ibsim's Link sends no trap (a real switch would send 128 on link up), so
# the bench sends OpenSM SIGHUP (a heavy sweep) after it.  Timed from the
# Unlink until the same smpquery is answered by the moved HCA (its port keeps
# its LID: guid2lid); LFT blocks = OpenSM's LFT Sets counted by libmaddrop
# from before the Unlink until its MADs stop.  OpenSM's ftree refuses this
# fabric (vSwitches are switches to it: "cannot build lid matrices") and
# falls back to minhop, so it runs minhop here.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = migration ]; then
	net="$SIM_TMP/mig-hyper.net"
	gen hyper --leaves 8 --spines 4 --hypervisors-per-leaf 4 --spare-ports 1 -o "$net"
	MIG_DST=V-5-0		# another leaf than V-0-0's
	# mig_reach LID NAME T0: poll `smpquery -L nodeinfo LID` from H-3 until
	# the node named NAME (its GUID from the net file) answers; the ms since
	# T0 (an EPOCHREALTIME without its dot) in REACH_MS
	mig_reach() {
		local lid=$1 guid t0=$3 n=0
		guid=$(awk -v n="\"$2\"" '/^caguid=/ { g = substr($1, 8) } $1 == "Hca" && $3 == n { print g }' "$net")
		[ -n "$guid" ] || fail "migration: no node $2 in $net"
		until on_host H-3 smpquery -t 100 -L nodeinfo "$lid" 2>/dev/null |
			grep -qi "^Guid:\.*$guid\$"; do
			n=$((n + 1))
			[ "$n" -lt 600 ] || fail "migration: LID $lid never answered by $2"
		done
		REACH_MS=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	}
	# mig_fts FILE: every switch's LFT entries (dump_fts -n from H-3) as "GUID LID PORT"
	mig_fts() {
		on_host H-3 dump_fts -n >"$1.raw" 2>/dev/null || fail "migration: dump_fts"
		python3 "$SIM_ROOT/tests/sim/lft_entries.py" "$1.raw" >"$1"
	}
	# mig_lids A B: how many LIDs have an entry that differs between A and B
	mig_lids() { diff "$1" "$2" | awk '/^[<>]/ { print $3 }' | sort -u | wc -l; }
	mig_ibsmd() {	# SCHEME ROUND: appends "mig ibsmd-SCHEME ms blocks sets vsw_blocks commit_us probe_ms lids"
		local scheme=$1 dir="$SIM_TMP/mig-ibsmd-$1-$2" ctl lid vf t0 rep b probe
		mkdir -p "$dir"
		printf 'virtualization: {lid_scheme: %s, vswitches: ["V-*"]}\n' "$scheme" >"$dir/p.yaml"
		sim_start "$net"
		export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
		SIM_EXTRA_PRELOAD="$SIM_MADDROP" on_host_bg H-0 "$IBSMD" -R "$ENGINE" -c "$dir/p.yaml" \
			-S "$dir/state" -s "$dir/sock" >"$dir/out" 2>"$dir/err"
		unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
		local sm=$SIM_LAST_PID
		ctl="$IBSMCTL -s $dir/sock"
		wait_until 120 grep -q '^subnet up' "$dir/out" || fail "migration: ibsmd did not come up"
		$ctl vm create vm0 --hypervisor V-0-0 --vf 0 >"$dir/create" 2>&1 ||
			fail "migration: vm create: $(cat "$dir/create")"
		lid=$($ctl --json vm list | jq -r '.vms[] | select(.name == "vm0") | .lid')
		t0=${EPOCHREALTIME/./}
		mig_reach "$lid" F-0-0-0 "$t0"
		probe=$REACH_MS
		$ctl vm migrate vm0 --to "$MIG_DST" --prepare >"$dir/prepare" 2>&1 ||
			fail "migration: prepare: $(cat "$dir/prepare")"
		stable "$dir"
		mig_fts "$dir/before"
		b=$(attr_sets "$dir" 0019)
		t0=${EPOCHREALTIME/./}
		rep=$($ctl --json vm migrate vm0 --to "$MIG_DST" --commit 2>"$dir/commit.err") ||
			fail "migration: commit: $rep $(cat "$dir/commit.err")"
		vf=$($ctl --json vm list | jq -r '.vms[] | select(.name == "vm0") | .vf')
		mig_reach "$lid" "F-${MIG_DST#V-}-$vf" "$t0"
		stable "$dir"
		mig_fts "$dir/after"
		echo "$rep" >"$dir/reply"
		echo "mig ibsmd-$scheme $REACH_MS $(jq -r .lft_blocks <<<"$rep") $(( $(attr_sets "$dir" 0019) - b ))" \
			"$(jq -r .vswitch_blocks <<<"$rep") $(jq -r .commit_us <<<"$rep") $probe" \
			"$(mig_lids "$dir/before" "$dir/after")" >>"$RESULTS"
		note "migration ibsmd $scheme round $2: $REACH_MS ms, reply $(jq -c . <<<"$rep")"
		kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
		sim_stop
	}
	mig_osm() {	# ROUND: appends "mig osm ms blocks sets - - probe_ms lids"
		local dir="$SIM_TMP/mig-osm-$1" lid t0 b spare probe
		mkdir -p "$dir"
		sim_start "$net"
		opensm -c "$dir/opensm.conf" >/dev/null 2>&1 || fail "opensm -c"
		sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$dir/opensm.conf"
		export MADDROP_COUNT="$dir/count.%p" MADDROP_EVERY=0 MADDROP_INTERVAL_MS=100
		OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
			on_host_bg H-0 opensm -F "$dir/opensm.conf" -f "$dir/opensm.log" >"$dir/out" 2>&1
		unset MADDROP_COUNT MADDROP_EVERY MADDROP_INTERVAL_MS
		local sm=$SIM_LAST_PID
		wait_until 300 grep -qs 'SUBNET UP' "$dir/opensm.log" || fail "migration: OpenSM did not come up"
		stable "$dir"
		lid=$(awk '/^caguid=/ { g = substr($1, 8) } $1 == "Hca" && $3 == "\"F-0-0-0\"" { print g }' "$net")
		lid=$(on_host H-3 smpquery portinfo -G "$(printf '0x%x' $((lid + 1)))" 1 2>/dev/null |
			sed -n 's/^Lid:\.*//p')
		[ -n "$lid" ] || fail "migration: no LID for F-0-0-0 under OpenSM"
		spare=$(awk '$1 == "Switch" && $3 == "\"'"$MIG_DST"'\"" { print $2 }' "$net")
		t0=${EPOCHREALTIME/./}
		mig_reach "$lid" F-0-0-0 "$t0"
		probe=$REACH_MS
		mig_fts "$dir/before"
		b=$(attr_sets "$dir" 0019)
		t0=${EPOCHREALTIME/./}
		sim_cmd 'Unlink "F-0-0-0"[1]' >/dev/null
		sim_cmd "Link \"F-0-0-0\"[1] \"$MIG_DST\"[$spare]" >"$dir/link"
		grep -q '#' "$dir/link" && fail "migration: ibsim Link: $(cat "$dir/link")"
		kill -HUP "$sm"
		mig_reach "$lid" F-0-0-0 "$t0"
		stable "$dir"
		mig_fts "$dir/after"
		echo "mig osm $REACH_MS - $(( $(attr_sets "$dir" 0019) - b )) - - $probe" \
			"$(mig_lids "$dir/before" "$dir/after")" >>"$RESULTS"
		note "migration OpenSM round $1: $REACH_MS ms, $(( $(attr_sets "$dir" 0019) - b )) LFT Sets"
		kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
		sim_stop
	}
	for r in $(seq "$ROUNDS"); do
		mig_ibsmd dynamic "$r"
		mig_ibsmd prepopulated "$r"
		mig_osm "$r"
	done
	echo
	echo "migration: one VM V-0-0 -> $MIG_DST (another leaf) on $(grep -o '[0-9]* switches, [0-9]* hosts' "$net"), median of $ROUNDS rounds"
	echo "  reach_ms: command start to smpquery -L nodeinfo VMLID from H-3 answered by the VM's node (polled;"
	echo "  probe_ms: the same poll of the VM before the move, answered at once: what the probe itself costs);"
	echo "  lft_blocks: physical-switch LFT blocks as ibsmd's reply counts them; lft_sets: LFT Sets counted by libmaddrop (ibsmd: vSwitch blocks too);"
	echo "  lids_moved: LIDs whose entry changed on some switch (dump_fts -n before and after; the VM's, and the swapped one under prepopulated)"
	printf '%-22s %9s %9s %11s %9s %12s %10s %11s\n' sm reach_ms probe_ms lft_blocks lft_sets vswitch_blks commit_us lids_moved
	for who in ibsmd-dynamic ibsmd-prepopulated osm; do
		printf '%-22s %9s %9s %11s %9s %12s %10s %11s\n' "$who" "$(col mig "$who" 3)" "$(col mig "$who" 8)" \
			"$(col mig "$who" 4)" "$(col mig "$who" 5)" "$(col mig "$who" 6)" "$(col mig "$who" 7)" \
			"$(col mig "$who" 9)"
	done
	echo "  (OpenSM: Unlink + Link to ${MIG_DST}'s spare port + SIGHUP, minhop; ibsmd: vm migrate --commit after --prepare, -R $ENGINE)"
fi

# ---- vlids: 3,456 hypervisors x 16 VFs brought up, extended and legacy ----
# build/emuvm: ibsmd's code in-process on the emulator (no ibsim: ibsim has
# no extended LIDs and would not carry 62,418 end ports), a fat tree of 96
# leaves x 36 hypervisors (fabgen hyper), 18 spines, 16 VFs each: 55,296
# VMs, every VF a LID at bring-up (prepopulated).  Extended: every device
# made capable, each VF an 18-bit vLID.  Legacy: no device capable (auto
# falls back); the 16-bit space holds 49,151 LIDs, so the VF ports beyond
# it are left shared-LID slots (every switch, PF and host keeps a LID).
# Each mode in its own process (peak RSS is the process's).  ibsmd only:
# OpenSM has no vLIDs and no shared-LID VMs.
if [ "${BENCH_ONLY:-}" = vlids ] || [ -z "${BENCH_ONLY:-}" ]; then
	net="$SIM_TMP/vl-hyper-3456.net"
	gen hyper --leaves 96 --spines 18 --hypervisors-per-leaf 36 --vfs 16 -o "$net"
	vl_field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }
	vx=$("$EMUVM" -x "$net" 2>"$SIM_TMP/emuvm-x.err") ||
		fail "emuvm extended failed: $vx $(tail -n 3 "$SIM_TMP/emuvm-x.err")"
	vl=$("$EMUVM" "$net" 2>"$SIM_TMP/emuvm-l.err") ||
		fail "emuvm legacy failed: $vl $(tail -n 3 "$SIM_TMP/emuvm-l.err")"
	echo
	echo "vLIDs: $(vl_field cas "$vx") CAs, $(vl_field vfs "$vx") VFs on 3456 hypervisors, $(vl_field switches "$vx") switches (build/emuvm, prepopulated; ibsmd only: OpenSM has no vLIDs)"
	printf '%-9s %11s %12s %7s %9s %9s %15s %11s\n' mode bringup_ms peak_rss_mb plids vf_vlids vf_plids vf_shared_slots mads_sent
	for m in "$vx" "$vl"; do
		printf '%-9s %11s %12s %7s %9s %9s %15s %11s\n' "$(sed -n 's/.*"mode":"\([a-z]*\)".*/\1/p' <<<"$m")" \
			"$(vl_field bringup_ms "$m")" "$(vl_field peak_rss_mb "$m")" "$(vl_field plids "$m")" \
			"$(vl_field vf_vlids "$m")" "$(vl_field vf_plids "$m")" "$(vl_field vf_shared_slots "$m")" \
			"$(vl_field mads_sent "$m")"
	done
	echo "  $vx"
	echo "  $vl"
fi

# ---- the offline job replay: Table II's setting on synthetic traces ----
# The paper's three XGFTs (Curie with hosts 0..5903 cabled, Atlas 0..1151)
# and a trace shaped like each system's (tests/gen/swfgen.py, seed 1,
# Table I's nodes, CPUs a node and utilisation), the first 1000 jobs
# replayed with 3dnn and with the dynamic mix; avg and max PJML of
# D-mod-K and of the job routing beside Table II's, and the replay's time.
# Fails when the job routing's max PJML is above D-mod-K's (the guard).
# No ibsim; ibsmd alone (OpenSM has no counterpart).
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = jobs-offline ]; then
	echo
	echo "Offline job replay, first 1000 jobs of synthetic Table-I-shaped traces (ibsmd --offline --jobs; paper: Table II)"
	printf '%-8s %-8s %9s %9s %8s %8s %11s %11s %10s\n' system pattern avg_dmodk avg_jobs max_dmodk \
		max_jobs paper_avg paper_max replay_ms
	# system M W hosts CPUs/node; Table II's 3dnn and dynamic avg and max (D-mod-K/SDN)
	while read -r sys m w hosts cpus p3a p3m pda pdm; do
		net="$SIM_TMP/jo-$sys.net" swf="$SIM_TMP/jo-$sys.swf"
		gen xgft --m "$m" --w "$w" --hosts "$hosts" -o "$net"
		python3 "$SIM_ROOT/tests/gen/swfgen.py" --system "$sys" --jobs 1200 --seed 1 \
			-o "$swf" 2>/dev/null || fail "jobs-offline: swfgen $sys"
		for pat in 3dnn dynamic; do
			line=$("$IBSMD" --offline "$net" -R dmodk --jobs "$swf" --first 1000 \
				--cpus-per-node "$cpus" --pattern "$pat" 2>"$SIM_TMP/jo.err" | grep '^jobs:') ||
				fail "jobs-offline: $sys $pat: $(tail -n 2 "$SIM_TMP/jo.err")"
			jf() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
			[ "$pat" = 3dnn ] && pa=$p3a pm=$p3m || pa=$pda pm=$pdm
			printf '%-8s %-8s %9s %9s %8s %8s %11s %11s %10s\n' "$sys" "$pat" "$(jf avg_pjml_dmodk)" \
				"$(jf avg_pjml_jobs)" "$(jf max_pjml_dmodk)" "$(jf max_pjml_jobs)" "$pa" "$pm" "$(jf replay_ms)"
			awk -v d="$(jf max_pjml_dmodk)" -v g="$(jf max_pjml_jobs)" 'BEGIN { exit !(g + 0 <= d + 0) }' ||
				fail "jobs-offline: $sys $pat: the job routing's max PJML above D-mod-K's: $line"
			echo "jobs-offline $sys $pat $line" >>"$RESULTS"
		done
	done <<-'TABLE'
	curie 15,15,30 1,15,15 5904 2 0.96/0.94 1.67/1.00 1.04/0.94 2.80/1.10
	thunder 8,8,16 1,8,8 1024 4 0.93/0.90 1.95/1.00 0.96/0.90 2.47/1.20
	atlas 9,9,18 1,9,9 1152 8 0.95/0.88 1.83/1.00 1.07/0.89 2.86/1.17
	TABLE
fi

# ---- jobs: a job's start to ready on the 3456-host tree (ibsmd alone) ----
# A fresh ibsim of ft3-3456, ibsmd with routing.engine dmodk and
# routing.jobs least-max-load.  A 64-node job (H-[0-63]) and a 1024-node
# job (H-[64-1087]), pattern random:4 (3dnn on contiguous hosts is
# D-mod-K's own balance: the guard keeps it and nothing is written), each
# `job start --wait` and `job end` $ROUNDS times: the LFT Sets of
# the start and the daemon's time from the request to the last answer
# (the reply's lft_sets and ms; the median), and the client's wall time.
# OpenSM has no counterpart.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = jobs ]; then
	net="$SIM_TMP/jobs-ft3-3456.net"
	gen ftree3 --radix 24 -o "$net"
	dir="$SIM_TMP/jobs"; mkdir -p "$dir"
	printf 'routing:\n  engine: dmodk\n  jobs: least-max-load\nperfmgr:\n  interval_s: 0\n' >"$dir/pol.yaml"
	sim_start "$net"
	on_host_bg H-3455 "$IBSMD" -c "$dir/pol.yaml" -S "$dir/state" -s "$dir/sock" \
		>"$dir/out" 2>"$dir/err"
	sm=$SIM_LAST_PID
	wait_until 120 grep -q '^subnet up' "$dir/out" || fail "jobs: ibsmd did not come up"
	echo
	echo "jobs: job start to ready on ft3-3456 under ibsim (routing.jobs least-max-load over dmodk, random:4; ibsmd alone)"
	printf '%-6s %9s %9s %10s %11s %10s\n' nodes lft_sets ready_ms client_ms max_load dmodk_max
	for spec in "64:H-[0-63]" "1024:H-[64-1087]"; do
		n=${spec%%:*} hl=${spec#*:}
		sets=() ms=() wall=()
		for r in $(seq "$ROUNDS"); do
			t0=$(date +%s%3N)
			out=$("$IBSMCTL" -s "$dir/sock" --json job start "b$n-$r" --nodes "$hl" \
				--pattern random:4 --wait --timeout 120) || fail "jobs: start of $n nodes: $out"
			wall+=("$(( $(date +%s%3N) - t0 ))")
			read -r s m ml dm < <(python3 -c 'import json, sys; o = json.loads(sys.argv[1]); print(o["lft_sets"], o["ms"], o["max_load"], o["dmodk_max_load"])' "$out")
			sets+=("$s") ms+=("$m")
			out=$("$IBSMCTL" -s "$dir/sock" --json job end "b$n-$r") || fail "jobs: end of $n nodes: $out"
		done
		printf '%-6s %9s %9s %10s %11.3f %10.3f\n' "$n" "$(printf '%s\n' "${sets[@]}" | median)" \
			"$(printf '%s\n' "${ms[@]}" | median)" "$(printf '%s\n' "${wall[@]}" | median)" "$ml" "$dm"
		echo "jobs ibsmd $n $(printf '%s\n' "${sets[@]}" | median) $(printf '%s\n' "${ms[@]}" | median) $(printf '%s\n' "${wall[@]}" | median) $ml $dm" >>"$RESULTS"
	done
	kill "$sm" 2>/dev/null; wait "$sm" 2>/dev/null
	sim_stop
fi

# ---- mkey: bring-up with every port keyed beside without, ibsmd and OpenSM ----
# ibsmd --once and opensm -o on fresh ibsims of ft3-3456, alternating: each
# without M_Key and with protection level 2 (ibsmd: a fresh state directory
# each round, so a new secret and no neighbour map, and the first NodeInfo
# across each link carries key 0; OpenSM: a fresh cache directory, so no
# guid2mkey, one subnet-wide key).  Wall time, MADs, SMPs carrying a key and
# carrying 0.  ibsim checks no key, so the figures are the SMs' own cost.
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = mkey ]; then
	name=mkey-ft3-3456
	net="$SIM_TMP/$name.net"
	gen ftree3 --radix 24 -o "$net"
	for r in $(seq "$ROUNDS"); do
		for prog in ibsmd ibsmd-mkey osm osm-mkey; do
			one_run "$name" "$net" "$prog" "$r"
		done
	done
	echo
	echo "M_Key: $name bring-up under ibsim, median of $ROUNDS rounds; ibsmd --once -R $ENGINE, OpenSM -o -R ftree; off, and on at protection level 2 (lease 60 s)"
	printf '%-6s %9s %9s %7s %10s %10s %7s %12s %11s\n' sm off_ms on_ms on/off off_mads on_mads mads_x \
		keyed_smps key0_smps
	for sm in ibsmd osm; do
		ow=$(col "$name" "$sm" 3); kw=$(col "$name" "$sm-mkey" 3)
		om=$(col "$name" "$sm" 4); km=$(col "$name" "$sm-mkey" 4)
		printf '%-6s %9s %9s %7s %10s %10s %7s %12s %11s\n' "$sm" "$ow" "$kw" "$(ratio "$kw" "$ow")" \
			"$om" "$km" "$(ratio "$km" "$om")" "$(count "$SIM_TMP/$name-$sm-mkey-1" smp_mkey_set)" \
			"$(count "$SIM_TMP/$name-$sm-mkey-1" smp_mkey_zero)"
	done
	iw=$(col "$name" ibsmd-mkey 3); ow=$(col "$name" osm-mkey 3)
	im=$(col "$name" ibsmd-mkey 4); om=$(col "$name" osm-mkey 4)
	echo "keyed: ibsmd/OpenSM time $(ratio "$iw" "$ow"), MADs $(ratio "$im" "$om")"
	# keys cost ibsmd no MAD: its own count at subnet up (mads_sent), round
	# by round.  The shim's totals above may count a write umad2sim refused
	# and sent again, or the performance manager's first ClassPortInfo Gets
	# when a loaded machine delays the exit: noise of either setting.
	for r in $(seq "$ROUNDS"); do
		a=$(grep -o 'mads_sent=[0-9]*' "$SIM_TMP/$name-ibsmd-$r/out" | tail -n 1)
		b=$(grep -o 'mads_sent=[0-9]*' "$SIM_TMP/$name-ibsmd-mkey-$r/out" | tail -n 1)
		[ -n "$a" ] && [ "$a" = "$b" ] || fail "mkey: round $r: ibsmd $a without keys, ${b:-none} with"
	done
	echo "ibsmd's own count at subnet up, every round: ${a#*=} MADs without keys and with"
	[ "$(count "$SIM_TMP/$name-osm-mkey-1" smp_mkey_set)" -gt 0 ] || fail "mkey: OpenSM sent no keyed SMP"
fi

# ---- routing: the engines for fabrics that are not trees, against OpenSM's ----
# dfsssp, dor and nue on a 512-switch 3-D torus (8x8x8) and dfsssp and nue
# on a 1,024-switch Dragonfly (a=16 p=8 h=8, 64 of its 129 groups), a host
# a switch on the torus; OpenSM's engine of the same name (its dor is
# minhop's routes taken by the lowest port, one VL, not deadlock-free on a
# torus; its nue on one VL, its default):
# ibsmd --offline (its route_ms; the process's peak RSS; median of ROUNDS)
# against OpenSM -o -R dfsssp on a fresh ibsim (one round: it takes
# minutes), whose routing time is read from its log: from "Entering MASTER
# state" to "dfsssp tables configured" (its LID assignment included, a
# second or two of it), the deadlock removal alone from "Virtual Lanes
# available" to "Virtual Lanes needed"; its peak RSS is the whole
# process's.  The VLs each needs (or that it refuses).
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = routing ]; then
	echo
	echo "Routing engines beside OpenSM's (ibsmd --offline, OpenSM -o under ibsim; $(nproc) cores)"
	printf '%-10s %-8s %9s %8s %6s %11s %11s %9s %8s %7s
' fabric engine ibsmd_ms rss_mb vls \
		osm_ms osm_dl_ms osm_rss osm_vls ratio
	secs() {	# the log's "Mon DD HH:MM:SS usec" -> seconds of the day
		awk '{ split($3, t, ":"); printf "%.3f\n", t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }'
	}
	while read -r name eng args; do
		net="$SIM_TMP/rt-$name.net"
		gen $args -o "$net"
		ms=() rss=()
		for _ in $(seq "$ROUNDS"); do
			/usr/bin/time -f '%e %M' -o "$SIM_TMP/rt.rss" "$IBSMD" --offline "$net" -R "$eng" \
				--verify >"$SIM_TMP/rt.out" 2>&1
			m=$(sed -n 's/.* route_ms=\([0-9]*\).*/\1/p' "$SIM_TMP/rt.out")
			# refused: the process's wall time, which holds the routing until the refusal
			[ -n "$m" ] || m=$(tail -n 1 "$SIM_TMP/rt.rss" | awk '{ printf "%d", $1 * 1000 }')
			ms+=("$m")
			rss+=("$(tail -n 1 "$SIM_TMP/rt.rss" | awk '{ print $2 }')")
		done
		vls=$(sed -n 's/^vls: used=//p' "$SIM_TMP/rt.out")
		[ -n "$vls" ] || vls="refused"
		mine=$(printf '%s\n' "${ms[@]}" | median)
		mb=$(( $(printf '%s\n' "${rss[@]}" | median) / 1024 ))
		sim_start "$net"
		d="$SIM_TMP/rt-osm-$name-$eng"
		mkdir -p "$d"
		OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" on_host H-0 /usr/bin/time -f %M -o "$d/rss" \
			opensm -o -R "$eng" -F /dev/null -D 0x03 -f "$d/log" >/dev/null 2>&1
		sim_stop
		t0=$(grep -m1 'Entering MASTER state' "$d/log" | secs)
		t1=$(grep -m1 "$eng tables configured" "$d/log" | secs)
		a0=$(grep -m1 'Virtual Lanes available' "$d/log" | secs)
		a1=$(grep -m1 'Virtual Lanes needed' "$d/log" | secs)
		osm_vls=$(sed -n 's/.*Virtual Lanes needed: \([0-9]*\).*/\1/p' "$d/log" | tail -n 1)
		grep -q 'Not enough VLs' "$d/log" && osm_vls="refused($osm_vls)"
		[ -n "$t1" ] || t1=$(grep -m1 'ERR AD25\|routing engine .* failed\|Fallback' "$d/log" | secs)
		osm_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { if (a != "" && b != "") printf "%d", (b - a) * 1000; else print "-" }')
		dl_ms=$(awk -v a="$a0" -v b="$a1" 'BEGIN { if (a != "" && b != "") printf "%d", (b - a) * 1000; else print "-" }')
		orss=$(( $(tail -n 1 "$d/rss" 2>/dev/null || echo 0) / 1024 ))
		printf '%-10s %-8s %9s %8s %6s %11s %11s %9s %8s %7s\n' "$name" "$eng" "$mine" "$mb" "$vls" \
			"$osm_ms" "$dl_ms" "$orss" "${osm_vls:--}" "$(ratio "$mine" "$osm_ms")"
		echo "routing $name $eng $mine $mb $vls $osm_ms $dl_ms $orss ${osm_vls:--}" >>"$RESULTS"
	done <<-'TABLE'
	df-1024 dfsssp dragonfly --a 16 --p 8 --h 8 --groups 64
	torus-512 dfsssp torus --dims 8,8,8
	torus-512 dor torus --dims 8,8,8
	torus-512 nue torus --dims 8,8,8
	df-1024 nue dragonfly --a 16 --p 8 --h 8 --groups 64
	TABLE
fi

# ---- the run, appended to tests/RESULTS.md ----
if [ "${BENCH_RECORD:-1}" = 1 ]; then
	rev=$(git -C "$SIM_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -n "$(git -C "$SIM_ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && rev="$rev+changes"
	{
		echo
		echo "## make bench, $(date -u +%Y-%m-%d\ %H:%M) UTC, $rev${BENCH_ONLY:+ (BENCH_ONLY=$BENCH_ONLY)}"
		echo
		echo '```'
		cat "$BENCH_OUT"
		echo '```'
	} >>"$SIM_ROOT/tests/RESULTS.md"
	echo "appended to tests/RESULTS.md"
fi
