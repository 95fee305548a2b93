#!/bin/bash
# Runs every ibsim end-to-end test (tests/sim/t_*.sh); non-zero if any failed.
#
# SIM_JOBS tests at a time (default: the cores), each with its own ibsim
# (lib.sh: a private socket and temp dir), its output printed whole when
# it ends.  The tests in ALONE run afterwards one by one: they time what a
# neighbour's load would stretch (a failover's limit, RMPP resends under a
# flood, a slow HTTP client's answers, an SM's answer to OpenSM within its
# transaction timeout).  SIM_JOBS=1 runs everything one after another.
cd "$(dirname "$0")" || exit 1
JOBS=${SIM_JOBS:-$(nproc 2>/dev/null || echo 2)}
ALONE=" t_handover.sh t_opensm_peer.sh t_standby.sh t_saflood.sh t_slowhttp.sh t_rogue.sh "
out=$(mktemp -d "${TMPDIR:-/tmp}/ibsmd-sim-run.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT

# run_one T: runs test T, its output and verdict into $out/T.log, its
# status into $out/T.rc
run_one() {
	local t=$1 start rc
	start=$(date +%s)
	{
		echo "== sim $t"
		bash "./$t"
		rc=$?
		if [ "$rc" = 0 ]; then
			echo "== sim $t: ok ($(( $(date +%s) - start )) s)"
		else
			echo "== sim $t: FAILED ($(( $(date +%s) - start )) s)"
		fi
		echo "$rc" >"$out/$t.rc"
	} >"$out/$t.log" 2>&1
}

# report T: prints T's output, notes a failure
failed=()
report() {
	cat "$out/$1.log"
	[ "$(cat "$out/$1.rc" 2>/dev/null)" = 0 ] || failed+=("$1")
}

together=()
for t in t_*.sh; do
	case "$ALONE" in
	*" $t "*) ;;
	*) together+=("$t") ;;
	esac
done

declare -A running	# pid -> test
for t in "${together[@]}"; do
	while [ "${#running[@]}" -ge "$JOBS" ]; do
		wait -n
		for pid in "${!running[@]}"; do
			kill -0 "$pid" 2>/dev/null && continue
			wait "$pid"
			report "${running[$pid]}"
			unset "running[$pid]"
		done
	done
	run_one "$t" &
	running[$!]=$t
done
for pid in "${!running[@]}"; do
	wait "$pid"
	report "${running[$pid]}"
done
for t in t_*.sh; do
	case "$ALONE" in
	*" $t "*) run_one "$t"; report "$t" ;;
	esac
done

if [ ${#failed[@]} -gt 0 ]; then
	# again at the end, where a CI log cut to its tail still shows them
	for t in "${failed[@]}"; do
		echo "== the end of $t's output:"
		tail -n 25 "$out/$t.log"
	done
	echo "sim tests failed: ${failed[*]}"
	exit 1
fi
echo "all sim tests passed"
