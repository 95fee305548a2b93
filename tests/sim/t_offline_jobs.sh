#!/bin/bash
# The offline job replay (no ibsim; a second or two): `ibsmd --offline
# XGFT -R dmodk --jobs TRACE` on XGFT(3;4,4,8;1,4,4) with only hosts
# 0..99 cabled (fabgen leaves out the switches with no host below them,
# so D-mod-K still sees a fat tree) and a Thunder-shaped synthetic trace
# (tests/gen/swfgen.py, 100 nodes of 4 CPUs).  For 3dnn and dynamic: the
# trace: line counts what the filter dropped, one job: line per job and
# one swml: line per event, the jobs: summary agrees with them (n, the
# averages, the largest PJML = the largest SWML on each side), and the
# job routing's largest PJML is not above D-mod-K's.  Refused: another
# engine's tables, --jobs without --offline, a malformed trace
# (file:line:column), an unknown pattern.
. "$(dirname "$0")/common.sh"

net="$SIM_TMP/x100.net"
swf="$SIM_TMP/t.swf"
gen xgft --m 4,4,8 --w 1,4,4 --hosts 100 -o "$net"
python3 "$SIM_ROOT/tests/gen/swfgen.py" --system thunder --nodes 100 --jobs 260 \
	--seed 3 -o "$swf" 2>/dev/null || fail "swfgen"
FIRST=200

# run PATTERN: the replay's stdout in $SIM_TMP/PATTERN.out
run() {
	"$IBSMD" --offline "$net" -R dmodk --jobs "$swf" --first "$FIRST" \
		--cpus-per-node 4 --pattern "$1" >"$SIM_TMP/$1.out" 2>"$SIM_TMP/$1.err" ||
		fail "$1: exit $?: $(tail -n 3 "$SIM_TMP/$1.err")"
}

for p in 3dnn dynamic; do
	run "$p"
	out="$SIM_TMP/$p.out"
	grep -qE "^trace: .* kept=$FIRST dropped_status=[1-9][0-9]* dropped_run=[1-9]" "$out" ||
		fail "$p: trace line: $(grep '^trace:' "$out")"
	# the summary recomputed from the job: and swml: lines
	awk -v first="$FIRST" -v pat="$p" '
		function v(k,   i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		/^job: / { n++; d = v("pjml_dmodk") + 0; g = v("pjml_jobs") + 0; sd += d; sg += g
			   if (d > md) md = d; if (g > mg) mg = g
			   if (pat != "dynamic" && v("pattern") != pat) { print "job pattern " $0; bad = 1 } }
		/^swml: / { e++; d = v("dmodk") + 0; g = v("jobs") + 0; if (d > wd) wd = d; if (g > wg) wg = g
			    if (v("t") + 0 < lt) { print "swml out of order: " $0; bad = 1 }; lt = v("t") + 0 }
		/^jobs: / { s = $0; sn = v("n") + 0; sad = v("avg_pjml_dmodk") + 0; sag = v("avg_pjml_jobs") + 0
			    smd = v("max_pjml_dmodk") + 0; smg = v("max_pjml_jobs") + 0; sk = v("skipped") + 0 }
		END {
			if (s == "") { print "no jobs: line"; exit 1 }
			if (n != first || sn != first || sk != 0) { print "jobs " n ", summary " s; bad = 1 }
			if (e != 2 * first) { print e " swml lines for " first " jobs"; bad = 1 }
			if (sad - sd / n > 0.0015 || sd / n - sad > 0.0015 || sag - sg / n > 0.0015 || sg / n - sag > 0.0015) {
				print "averages " sd / n ", " sg / n " against " s; bad = 1 }
			if (md != smd || mg != smg) { print "largest PJML " md ", " mg " against " s; bad = 1 }
			if (wd != smd || wg != smg) { print "largest SWML " wd ", " wg " against " s; bad = 1 }
			if (smg > smd) { print "job routing above D-mod-K: " s; bad = 1 }
			if (smd <= 1) { print "D-mod-K never above 1.0: " s; bad = 1 }
			exit bad
		}' "$out" >"$SIM_TMP/$p.check" || fail "$p: $(head -n 3 "$SIM_TMP/$p.check")"
	note "$p: $(grep '^jobs:' "$out")"
done
grep -q 'pattern=random:4' "$SIM_TMP/dynamic.out" && grep -q 'pattern=ring' "$SIM_TMP/dynamic.out" ||
	fail "dynamic: not a mix of patterns"
pass "3dnn and dynamic: one job: line a job, one swml: line an event, the summary agrees, max PJML = max SWML, job routing's max PJML <= D-mod-K's"

"$IBSMD" --offline "$net" -R minhop --jobs "$swf" >"$SIM_TMP/o" 2>&1 && fail "minhop's tables accepted"
grep -q 'the job routing works over dmodk' "$SIM_TMP/o" || fail "minhop: $(tail -n 2 "$SIM_TMP/o")"
"$IBSMD" --jobs "$swf" >"$SIM_TMP/o" 2>&1 && fail "--jobs without --offline accepted"
grep -q -- '--jobs needs --offline' "$SIM_TMP/o" || fail "--jobs alone: $(tail -n 2 "$SIM_TMP/o")"
printf '; bad\n1 0 0 10 4 -1 -1 4 -1 -1 1\n' >"$SIM_TMP/bad.swf"
"$IBSMD" --offline "$net" -R dmodk --jobs "$SIM_TMP/bad.swf" >"$SIM_TMP/o" 2>&1 && fail "a short record accepted"
grep -q 'bad.swf:2:[0-9]*: not a job record' "$SIM_TMP/o" || fail "short record: $(tail -n 2 "$SIM_TMP/o")"
"$IBSMD" --offline "$net" -R dmodk --jobs "$swf" --pattern torus >"$SIM_TMP/o" 2>&1 && fail "pattern torus accepted"
grep -q 'torus' "$SIM_TMP/o" || fail "pattern torus: $(tail -n 2 "$SIM_TMP/o")"
pass "refused: minhop's tables, --jobs without --offline, a short record (file:line:column), an unknown pattern"
