#!/bin/bash
# The offline job replay (no ibsim; a second or two): `ibsmd --offline
# XGFT -R dmodk --jobs TRACE` on XGFT(3;4,4,8;1,4,4) with only hosts
# 0..99 cabled (fabgen leaves out the switches with no host below them,
# so D-mod-K still sees a fat tree) and a Thunder-shaped synthetic trace
# (tests/gen/swfgen.py, 100 nodes of 4 CPUs).  For 3dnn and dynamic: the
# trace: line counts what the filter dropped, one job: line per job and
# one swml: line per event, the jobs: summary agrees with them (n, the
# averages, the largest PJML = the largest SWML on each side), and the
# job routing's largest PJML is not above D-mod-K's.  A golden run on
# XGFT(3;2,2,4;1,2,2): the hand-worked two-job case, D-mod-K 2.0 against
# the job routing's 1.0.  Refused: another
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

# A golden run on XGFT(3;2,2,4;1,2,2) (H-d is D-mod-K's destination d):
# one-node jobs 1..16 fill hosts 0..15; ends free hosts 0 and 4 at 10, 1
# and 6 at 20, when the two-node ring jobs 17 and 18 start on them (ends
# first); 17's 0->4 and 18's 1->6 both leave L0-S0 towards L1-S0 under
# D-mod-K (load 2.0 for both), the job routing moves 18's (1.0).
small="$SIM_TMP/x16.net"
gen xgft --m 2,2,4 --w 1,2,2 -o "$small"
for i in $(seq 1 16); do
	h=$((i - 1)) run=100
	case $h in 0|4) run=10 ;; 1|6) run=20 ;; esac
	echo "$i 0 0 $run 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1"
done >"$SIM_TMP/w.swf"
printf '17 10 0 40 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1\n18 20 0 10 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1\n' >>"$SIM_TMP/w.swf"
"$IBSMD" --offline "$small" -R dmodk --jobs "$SIM_TMP/w.swf" --pattern ring >"$SIM_TMP/w.out" 2>&1 ||
	fail "golden: $(tail -n 2 "$SIM_TMP/w.out")"
for want in 'job: id=17 nodes=2 pjml_dmodk=2.000 pjml_jobs=1.000 pattern=ring flows=2 guarded=1' \
	'job: id=18 nodes=2 pjml_dmodk=2.000 pjml_jobs=1.000 pattern=ring flows=2 guarded=0' \
	'job: id=16 nodes=1 pjml_dmodk=0.000 pjml_jobs=0.000 pattern=ring flows=0 guarded=0' \
	'swml: t=20 dmodk=2.000 jobs=1.000' \
	'jobs: n=18 avg_pjml_dmodk=0.222 max_pjml_dmodk=2.000 avg_pjml_jobs=0.111 max_pjml_jobs=1.000 skipped=0 guarded=1 max_swml_dmodk=2.000 max_swml_jobs=1.000 pattern=ring'; do
	grep -qF "$want" "$SIM_TMP/w.out" || fail "golden: no line '$want': $(grep -E '^(job: id=1[78]|jobs:)' "$SIM_TMP/w.out")"
done
pass "golden run on XGFT(3;2,2,4;1,2,2): two ring jobs on {H-0,H-4} and {H-1,H-6}: PJML 2.0 under D-mod-K, 1.0 under the job routing"

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
