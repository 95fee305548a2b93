#!/bin/bash
# Runs every ibsim end-to-end test (tests/sim/t_*.sh); non-zero if any failed.
cd "$(dirname "$0")" || exit 1
failed=()
for t in t_*.sh; do
	echo "== sim $t"
	start=$(date +%s)
	if bash "./$t"; then
		echo "== sim $t: ok ($(( $(date +%s) - start )) s)"
	else
		echo "== sim $t: FAILED ($(( $(date +%s) - start )) s)"
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "sim tests failed: ${failed[*]}"
	exit 1
fi
echo "all sim tests passed"
