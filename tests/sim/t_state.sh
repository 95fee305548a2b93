#!/bin/bash
# State and shutdown safety:
# 1. the policy file: a FIFO or a link to /dev/zero as -c is refused at once,
#    100,000 nested brackets in well under a second;
# 2. an unwritable state directory: `--once` exits 1 and sends no Set
#    (libmaddrop counts ibsmd's MADs), where a writable one sends Sets;
#    a FIFO as the state file is refused at once;
# 3. a corrupt guid2lid: exit 1 naming guid2lid:LINE, the file kept as
#    guid2lid.corrupt.*, the next start refused too, no MAD sent; a vms
#    file whose VMs claim a switch's and a host's LIDs: exit 1 naming
#    vms:LINE, no Set, no LID moved (ibnetdiscover);
# 4. SIGTERM ends a running daemon within a second with ibsim killed under
#    it, with ibsim stopped (SIGSTOP: the device never answers), and with
#    ibsim stopped before ibsmd starts (the loop never runs);
# 5. SIGKILL while the LID table is written: STATE_KILLS (default 20)
#    kills at varying moments of a heavy sweep of an --emulate daemon whose
#    guid2lid holds 40,000 reservations (1.4 MB a write), steered around
#    the write with +-10 ms of jitter; the kills that
#    landed mid-write are counted (a guid2lid.tmp.PID left); the file is
#    always the old version or a complete new one; the next start removes
#    the temporary file.
# 6. (with chattr) the state directory made immutable under a running
#    daemon: the failed write is logged, the daemon goes on, and the next
#    heavy sweep after chattr -i writes the file;
. "$(dirname "$0")/common.sh"

KILLS=${STATE_KILLS:-20}
# directories made immutable (chattr +i): made mutable again at exit
immutable=()
trap 'rc=$?; for d in "${immutable[@]}"; do chattr -i "$d" 2>/dev/null; done; (exit $rc); sim__cleanup' EXIT
chattr_ok=0
net="$SIM_TMP/ft.net"
gen ftree2 --radix 8 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net"
[ -e "$SIM_MADDROP" ] || fail "build/libmaddrop.so is missing: run make"

# elapsed_ms T0: milliseconds since T0 (date +%s%N)
elapsed_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# ---- 1. the policy file ----
mkfifo "$SIM_TMP/fifo.yaml"
ln -s /dev/zero "$SIM_TMP/zero.yaml"
for f in fifo zero; do
	t0=$(date +%s%N)
	rc=0
	timeout 10 "$IBSMD" -n -c "$SIM_TMP/$f.yaml" >/dev/null 2>"$SIM_TMP/$f.err" || rc=$?
	ms=$(elapsed_ms "$t0")
	[ "$rc" -eq 78 ] || fail "-c $f.yaml: exit $rc, want 78: $(cat "$SIM_TMP/$f.err")"
	grep -q 'not a regular file' "$SIM_TMP/$f.err" || fail "-c $f.yaml: $(cat "$SIM_TMP/$f.err")"
	[ "$ms" -lt 1000 ] || fail "-c $f.yaml took $ms ms"
	# the daemon, not only -n: refused before anything else
	rc=0
	timeout 10 "$IBSMD" --once -c "$SIM_TMP/$f.yaml" -S "$SIM_TMP/st-$f" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 78 ] || fail "--once -c $f.yaml: exit $rc, want 78"
done
pass "a FIFO and a link to /dev/zero as -c are refused at once (exit 78: $(cat "$SIM_TMP/fifo.err"))"

python3 -c 'import sys; sys.stdout.write("routing: " + "[" * 100000 + "]" * 100000 + "\n")' \
	>"$SIM_TMP/deep.yaml"
t0=$(date +%s%N)
rc=0
timeout 20 "$IBSMD" -n -c "$SIM_TMP/deep.yaml" >/dev/null 2>"$SIM_TMP/deep.err" || rc=$?
ms=$(elapsed_ms "$t0")
[ "$rc" -eq 78 ] && grep -q 'nested deeper than 64 levels' "$SIM_TMP/deep.err" ||
	fail "100,000 nested brackets: exit $rc: $(cat "$SIM_TMP/deep.err")"
[ "$ms" -lt 1000 ] || fail "100,000 nested brackets refused after $ms ms"
pass "100,000 nested brackets refused in $ms ms: $(cat "$SIM_TMP/deep.err")"

# ---- 2. an unwritable state directory ----
sim_start "$net"

# once_counted NAME STATE [options]: ibsmd --once at H-0 with libmaddrop
# counting its MADs into $SIM_TMP/NAME.count; returns ibsmd's status
once_counted() {
	local name=$1 state=$2
	shift 2
	MADDROP_COUNT="$SIM_TMP/$name.count" SIM_EXTRA_PRELOAD="$SIM_MADDROP" \
		on_host H-0 "$IBSMD" --once -S "$state" "$@" \
		>"$SIM_TMP/$name.out" 2>"$SIM_TMP/$name.err"
}
# count NAME KEY: a counter of libmaddrop's file (0 when absent)
count() {
	local v
	v=$(awk -v k="$2" '$1 == k { print $2 }' "$SIM_TMP/$1.count" 2>/dev/null)
	echo "${v:-0}"
}

ro="$SIM_TMP/ro-state"
mkdir -p "$ro"
how="immutable (chattr +i)"
immutable+=("$ro")
if chattr +i "$ro" 2>/dev/null && ! touch "$ro/x" 2>/dev/null; then
	chattr_ok=1
else
	chattr -i "$ro" 2>/dev/null
	rm -f "$ro/x"
	ro="$SIM_TMP/plain-file/state"	# under a regular file: ENOTDIR
	: >"$SIM_TMP/plain-file"
	how="below a regular file"
fi
rc=0
once_counted ro "$ro" || rc=$?
[ "$rc" -eq 1 ] || fail "unwritable state dir ($how): --once exit $rc, want 1"
grep -q "ibsmd: $ro: cannot" "$SIM_TMP/ro.err" || fail "no clear error: $(cat "$SIM_TMP/ro.err")"
[ "$(count ro set)" -eq 0 ] && [ "$(count ro total)" -eq 0 ] ||
	fail "unwritable state dir: $(count ro total) MADs sent, $(count ro set) Sets"
chattr -i "$ro" 2>/dev/null
once_counted rw "$SIM_TMP/rw-state" || fail "writable state dir: --once failed: $(tail -n 3 "$SIM_TMP/rw.err")"
[ "$(count rw set)" -gt 0 ] || fail "the counter saw no Set from a working --once"
pass "state dir $how: exit 1, 0 MADs ($(count rw set) Sets with a writable one): $(cat "$SIM_TMP/ro.err")"

mkdir -p "$SIM_TMP/fifo-state"
mkfifo "$SIM_TMP/fifo-state/guid2lid"
t0=$(date +%s%N)
once_counted fifo "$SIM_TMP/fifo-state" &
p=$!
bg_register "$p"
wait_until 10 sim__gone "$p" || fail "a FIFO as guid2lid: ibsmd still running after 10 s"
rc=0
wait "$p" || rc=$?
ms=$(elapsed_ms "$t0")
[ "$rc" -eq 1 ] && grep -q 'guid2lid: not a regular file (a FIFO)' "$SIM_TMP/fifo.err" ||
	fail "a FIFO as guid2lid: exit $rc after $ms ms: $(cat "$SIM_TMP/fifo.err")"
[ "$(count fifo total)" -eq 0 ] || fail "a FIFO as guid2lid: $(count fifo total) MADs sent"
pass "a FIFO as the state file guid2lid: refused in $ms ms, 0 MADs"

# ---- 3. a corrupt guid2lid ----
st="$SIM_TMP/rw-state"
sed -i '4s/.*/0x0002c9020000 garbage/' "$st/guid2lid"
rc=0
once_counted corrupt "$st" || rc=$?
[ "$rc" -eq 1 ] || fail "corrupt guid2lid: exit $rc, want 1"
grep -q "$st/guid2lid:4: expected" "$SIM_TMP/corrupt.err" || fail "corrupt guid2lid: $(cat "$SIM_TMP/corrupt.err")"
aside=$(ls "$st" | grep '^guid2lid\.corrupt\.' || true)
[ -n "$aside" ] && [ ! -e "$st/guid2lid" ] || fail "guid2lid not set aside: $(ls "$st")"
[ "$(count corrupt total)" -eq 0 ] || fail "corrupt guid2lid: $(count corrupt total) MADs sent"
rc=0
once_counted corrupt2 "$st" || rc=$?
[ "$rc" -eq 1 ] && grep -q "guid2lid.corrupt.*not starting" "$SIM_TMP/corrupt2.err" ||
	fail "second start with the corrupt file set aside: exit $rc: $(cat "$SIM_TMP/corrupt2.err")"
[ "$(count corrupt2 total)" -eq 0 ] || fail "second start: $(count corrupt2 total) MADs sent"
pass "corrupt guid2lid: exit 1 naming guid2lid:4, kept as $aside, the next start refused too, 0 MADs"

# ---- 3b. a vms file whose VMs claim live LIDs ----
st="$SIM_TMP/vm-state"
once_counted vmup "$st" || fail "--once for the VM test: $(tail -n 3 "$SIM_TMP/vmup.err")"
lids_tables "$SIM_TMP/vm.before"
swlid=$(awk '$1 ~ /^0x0002c9010/ { print $2; exit }' "$st/guid2lid")
hlid=$(awk -v g="$(host_guid H-5)" '$1 == g { print $2 }' "$st/guid2lid")
[ -n "$swlid" ] && [ -n "$hlid" ] || fail "no switch or H-5 LID in guid2lid: $(head -n 5 "$st/guid2lid")"
cp "$st/guid2lid" "$SIM_TMP/vm.guid2lid"
printf 'ibsmd-vms 1\nvm vm-a vguid=0x0002c9ff00000001 lid=%s hypervisor=0x0002c9ff00001000 vf=0 vf_guid=0x0002c9ff00002001 weight=1\nvm vm-b vguid=0x0002c9ff00000002 lid=%s hypervisor=0x0002c9ff00001000 vf=1 vf_guid=0x0002c9ff00002002 weight=1\n' \
	"$swlid" "$hlid" >"$st/vms"
rc=0
once_counted vmlive "$st" || rc=$?
[ "$rc" -eq 1 ] || fail "a vms file claiming live LIDs: exit $rc, want 1: $(grep -m2 'vms\|subnet up' "$SIM_TMP/vmlive.err")"
grep -q "$st/vms:2: VM 'vm-a' claims LID $swlid, which switch \"L[0-9]-S[0-9]*\" port 0 (GUID 0x0002c9010" "$SIM_TMP/vmlive.err" ||
	fail "no clear error naming vms:2: $(grep -m2 vms "$SIM_TMP/vmlive.err")"
[ "$(count vmlive set)" -eq 0 ] || fail "a vms file claiming live LIDs: $(count vmlive set) Sets"
cmp -s "$st/guid2lid" "$SIM_TMP/vm.guid2lid" || fail "guid2lid changed: $(diff "$SIM_TMP/vm.guid2lid" "$st/guid2lid" | head -n 4)"
lids_tables "$SIM_TMP/vm.after"
same_as "$SIM_TMP/vm.before" "$SIM_TMP/vm.after" "after the refused vms file"
sed -i '2d' "$st/vms"	# vm-b alone still claims H-5's LID
rc=0
once_counted vmlive2 "$st" || rc=$?
[ "$rc" -eq 1 ] && grep -q "$st/vms:2: VM 'vm-b' claims LID $hlid, which node \"H-5\" port 1" "$SIM_TMP/vmlive2.err" ||
	fail "vm-b claiming H-5's LID: exit $rc: $(grep -m2 vms "$SIM_TMP/vmlive2.err")"
pass "a vms file whose VMs claim a switch's and a host's LIDs: exit 1 naming vms:LINE, 0 Sets, no LID moved (ibnetdiscover)"

# ---- 4. SIGTERM with ibsim gone or stopped ----
# term_ok PID NAME: SIGTERM to PID; it must be gone within a second with
# status 0; the milliseconds in $term_ms
term_ok() {
	local pid=$1 name=$2 t0 rc=0
	t0=$(date +%s%N)
	kill -TERM "$pid"
	wait_until 5 sim__gone "$pid"
	term_ms=$(elapsed_ms "$t0")
	kill -0 "$pid" 2>/dev/null && fail "$name: ibsmd still running 5 s after SIGTERM"
	[ "$term_ms" -lt 1000 ] || fail "$name: ibsmd took $term_ms ms to exit after SIGTERM"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "$name: exit status $rc after SIGTERM, want 0"
}
# term_after SIG NAME: a daemon at H-0; ibsim gets SIG once the subnet is
# up and a second later the daemon SIGTERM (term_ok); the state it wrote
# is whole
term_after() {
	local sig=$1 name=$2 log="$SIM_TMP/$2.log" pid
	on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/$name-state" -s "$SIM_TMP/$name.sock" >"$log" 2>&1
	pid=$SIM_LAST_PID
	wait_until 20 grep -q '^subnet up:' "$log" || fail "$name: no 'subnet up': $(tail -n 3 "$log")"
	kill -"$sig" "$SIM_PID"
	sleep 1
	term_ok "$pid" "$name"
	ls "$SIM_TMP/$name-state"/guid2lid.tmp.* >/dev/null 2>&1 && fail "$name: a temporary state file is left"
	"$IBSMD" --offline "$net" -S "$SIM_TMP/$name-state" >/dev/null 2>&1 ||
		fail "$name: the state written is not readable"
}
term_after KILL killed
ms=$term_ms
sim_stop 2>/dev/null
sim_start "$net"
term_after STOP stopped
ms2=$term_ms
# stopped before ibsmd starts: the signal comes while umad2sim waits for
# ibsim in the transport's open, before the loop ever runs
on_host_bg H-0 "$IBSMD" -S "$SIM_TMP/early-state" -s "$SIM_TMP/early.sock" >"$SIM_TMP/early.log" 2>&1
sleep 1
kill -0 "$SIM_LAST_PID" 2>/dev/null || fail "early: ibsmd exited on its own: $(tail -n 3 "$SIM_TMP/early.log")"
term_ok "$SIM_LAST_PID" early
kill -CONT "$SIM_PID"
sim_stop
pass "SIGTERM ends the daemon (exit 0) in $ms ms with ibsim killed, $ms2 ms with ibsim stopped, $term_ms ms stopped while ibsmd opens the device"

# ---- 5. SIGKILL mid-write ----
kst="$SIM_TMP/kill-state"
mkdir -p "$kst"
python3 - "$kst/guid2lid" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(40000):	# absent ports' reservations, kept by every write
        f.write("0x%016x %u 1700000000\n" % (0x0002c9ff00000000 + i, 1000 + i))
PY
ksock="$SIM_TMP/kill.sock"
# kd_start N: the --emulate daemon, log $SIM_TMP/kill.N.log; pid in $kd
kd_start() {
	"$IBSMD" --emulate "$net" -S "$kst" -s "$ksock" >"$SIM_TMP/kill.$1.log" 2>&1 &
	kd=$!
	bg_register "$kd"
	wait_until 20 grep -qs '^subnet up:' "$SIM_TMP/kill.$1.log" ||
		fail "kill $1: no 'subnet up': $(tail -n 3 "$SIM_TMP/kill.$1.log")"
}
# valid OLD NEW: NEW is OLD, or a complete guid2lid with OLD's GUID -> LID
valid() {
	cmp -s "$1" "$2" && return 0
	python3 - "$1" "$2" <<'PY'
import re, sys
def load(path):
    lines = open(path).read().split("\n")
    assert lines[-1] == "", "no newline at the end"
    lines = lines[:-1]
    assert lines[0].startswith("# ibsmd GUID -> LID, format 2"), "header"
    m = re.fullmatch(r"# end: (\d+) entries", lines[-1])
    assert m, "no end line: %r" % lines[-1][:60]
    ent = [l for l in lines if not l.startswith("#")]
    assert len(ent) == int(m.group(1)), "count"
    out = {}
    for l in ent:
        g, lid, seen = l.split()
        out[int(g, 16)] = int(lid)
    return out
old, new = load(sys.argv[1]), load(sys.argv[2])
assert old == new, "GUID -> LID changed"
PY
}
kd_start 0
"$IBSMCTL" -s "$ksock" sweep --heavy >/dev/null
sleep 0.3
grep -q '^# ibsmd GUID -> LID, format 2' "$kst/guid2lid" || fail "no format-2 guid2lid written"
mid=0 old=0 new=0 delay=60
for ((i = 1; i <= KILLS; i++)); do
	cp "$kst/guid2lid" "$SIM_TMP/before"
	ino=$(stat -c %i "$kst/guid2lid")
	"$IBSMCTL" -s "$ksock" sweep --heavy >/dev/null || fail "kill $i: ibsmctl sweep --heavy"
	# the kill comes $delay ms +- 10 after the request: later when the last
	# kill came before the write, earlier when after, so that the kills
	# keep falling around the write (some 20-40 ms of a 50-150 ms sweep)
	ms=$((delay + RANDOM % 21 - 10))
	[ "$ms" -lt 0 ] && ms=0
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	kill -KILL "$kd"
	wait "$kd" 2>/dev/null
	tmps=$(ls "$kst" | grep -c '^guid2lid\.tmp\.' || true)
	[ "$tmps" -gt 0 ] && mid=$((mid + 1))
	# the old file is the old inode, untouched; a new one is a new inode
	if [ "$(stat -c %i "$kst/guid2lid")" = "$ino" ]; then
		cmp -s "$SIM_TMP/before" "$kst/guid2lid" ||
			fail "kill $i: the old guid2lid was changed in place"
		old=$((old + 1))
		[ "$tmps" -eq 0 ] && delay=$((delay + 8))
	else
		delay=$((delay > 8 ? delay - 8 : 0))
		err=$(valid "$SIM_TMP/before" "$kst/guid2lid" 2>&1) ||
			fail "kill $i: the new guid2lid is not complete: $err"
		new=$((new + 1))
	fi
	rm -f "$ksock"
	kd_start "$i"
	if [ "$tmps" -gt 0 ]; then
		ls "$kst" | grep -q '^guid2lid\.tmp\.' && fail "kill $i: the temporary file survived the start"
		grep -q 'removed 1 temporary guid2lid file' "$SIM_TMP/kill.$i.log" ||
			fail "kill $i: the removal was not logged"
	fi
done
kill -TERM "$kd"
wait "$kd" 2>/dev/null
[ "$mid" -gt 0 ] || fail "no kill of $KILLS landed mid-write: the test shows nothing"
pass "$KILLS SIGKILLs during heavy sweeps: the old file $old times ($mid mid-write: a temp file left, removed at the next start), a complete new one $new times, never anything else"

# ---- 6. unwritable under a running daemon ----
# chattr +i on the state directory where the filesystem has it; elsewhere
# a directory in the way of the daemon's temporary file (its name has the
# daemon's PID), which open(2) refuses with EISDIR.
kd_start last
ino=$(stat -c %i "$kst/guid2lid")
blocker="$kst/guid2lid.tmp.$kd"
if [ "$chattr_ok" = 1 ]; then
	how="immutable (chattr +i)"
	immutable+=("$kst")
	chattr +i "$kst"
else
	how="a directory in the way of guid2lid.tmp.$kd"
	mkdir "$blocker"
fi
"$IBSMCTL" -s "$ksock" sweep --heavy >/dev/null || fail "unwritable: ibsmctl sweep --heavy"
wait_until 10 grep -q 'cannot save the LID table: .*guid2lid.tmp' "$SIM_TMP/kill.last.log" ||
	fail "unwritable state dir ($how): no error logged: $(tail -n 3 "$SIM_TMP/kill.last.log")"
kill -0 "$kd" || fail "unwritable state dir ($how): the daemon exited"
[ "$(stat -c %i "$kst/guid2lid")" = "$ino" ] || fail "unwritable state dir ($how): guid2lid replaced?"
if [ "$chattr_ok" = 1 ]; then
	chattr -i "$kst"
else
	rmdir "$blocker"
fi
"$IBSMCTL" -s "$ksock" sweep --heavy >/dev/null || fail "writable again: ibsmctl sweep --heavy"
new_ino() { [ "$(stat -c %i "$kst/guid2lid")" != "$ino" ]; }
wait_until 10 new_ino || fail "writable again: guid2lid not written"
kill -TERM "$kd"
wait "$kd" 2>/dev/null
pass "state dir unwritable under the daemon ($how): '$(grep -o 'cannot save the LID table: [^:]*' "$SIM_TMP/kill.last.log" | head -n 1)' logged, the daemon went on, the next heavy sweep after it became writable wrote guid2lid"
