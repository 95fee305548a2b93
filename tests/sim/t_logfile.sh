#!/bin/bash
# ibsmd -f FILE, no fabric (the emulator, a few seconds): the log lines go
# to FILE (0640, dated) and not to stderr; a FILE that cannot be opened is
# refused at start, exit 1, as an unusable -S or -s; after `mv FILE FILE.1`
# and SIGUSR1 the new lines land in a fresh FILE and none is lost (every
# heavy sweep's "done" line is in FILE.1 or FILE); a FILE that cannot be
# opened again leaves the old one in use, with the error in it; SIGHUP
# opens it again too; etc/ibsmd.logrotate is read by logrotate without an
# error, and rotates FILE for real with the daemon's reopen.
. "$(dirname "$0")/common.sh"

net="$SIM_ROOT/etc/demo.net"
log="$SIM_TMP/ibsmd.log"
sock="$SIM_TMP/ctl.sock"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
done_lines() { cat "$@" 2>/dev/null | grep -c 'heavy sweep done'; }
heavy() { ctl --json status | jq .heavy_sweeps; }

out=$("$IBSMD" --emulate "$net" -S "$SIM_TMP/st0" -s "$SIM_TMP/x.sock" -f "$SIM_TMP/no/dir/x.log" 2>&1)
rc=$?
[ "$rc" -eq 1 ] && grep -q "^ibsmd: log file $SIM_TMP/no/dir/x.log: No such file or directory$" <<<"$out" &&
	[ ! -e "$SIM_TMP/x.sock" ] || fail "an unusable -f: exit $rc ($out)"
pass "an unusable -f: exit 1, '$out'"

"$IBSMD" --emulate "$net" -S "$SIM_TMP/st" -s "$sock" -f "$log" >"$SIM_TMP/out" 2>"$SIM_TMP/err" &
pid=$!
bg_register "$pid"
wait_until 10 grep -q 'heavy sweep done' "$log" 2>/dev/null ||
	fail "no 'heavy sweep done' in the -f file: $(tail -n 3 "$log" "$SIM_TMP/err" 2>&1)"
[ "$(stat -c %a "$log")" = 640 ] || fail "the log file's mode: $(stat -c %a "$log")"
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}[+-][0-9]{2}:[0-9]{2} ibsmd\[notice\]: ' "$log" ||
	fail "log lines not dated: $(head -n 2 "$log")"
[ ! -s "$SIM_TMP/err" ] || fail "log lines on stderr too: $(head -n 3 "$SIM_TMP/err")"
pass "-f: $(wc -l <"$log") dated lines in the file (mode 640), none on stderr"

# logrotate's move, then sweeps asked for right before and after SIGUSR1
mv "$log" "$log.1"
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep"
kill -USR1 "$pid"
wait_until 10 test -e "$log" || fail "SIGUSR1: no new $log"
ctl sweep --heavy >/dev/null || fail "ibsmctl sweep"
n=$(heavy)
wait_until 10 test "$(done_lines "$log" "$log.1")" -ge "$n" ||
	fail "lost lines: $n heavy sweeps, $(done_lines "$log" "$log.1") 'done' lines in $log and $log.1"
[ "$(done_lines "$log")" -ge 1 ] && [ "$(done_lines "$log.1")" -ge 1 ] ||
	fail "SIGUSR1: $(done_lines "$log.1") sweeps in the moved file, $(done_lines "$log") in the new one"
kill -0 "$pid" || fail "SIGUSR1 ended the daemon"
pass "mv + SIGUSR1: $n heavy sweeps, every 'done' line in $(basename "$log").1 ($(done_lines "$log.1")) or the new file ($(done_lines "$log"))"

# a name that cannot be opened again: the old file stays in use
mv "$log" "$log.2"
mkdir "$log"
kill -USR1 "$pid"
wait_until 10 grep -q "SIGUSR1: log file $log: Is a directory: still writing to the file opened before" "$log.2" ||
	fail "a failed reopen: $(tail -n 2 "$log.2")"
ctl sweep --heavy >/dev/null
wait_until 10 test "$(done_lines "$log.2")" -ge 2 || fail "after a failed reopen: $(tail -n 2 "$log.2")"
rmdir "$log"
kill -HUP "$pid"
wait_until 10 grep -q 'heavy sweep done' "$log" 2>/dev/null || fail "SIGHUP: nothing in a new $log"
pass "a reopen that fails keeps the old file (the error logged in it); SIGHUP opens the file again"

# SIGUSR1 while ibsmd starts (a rotation while it restarts), before its
# handler is in place: -f names a FIFO, whose open blocks until a reader
# comes -- ibsmd is then held in its start-up, seen in the kernel's
# wait_for_partner; the signal must not end it, and once a reader opens
# the FIFO it comes up and logs there
mkfifo "$SIM_TMP/early.fifo"
"$IBSMD" --emulate "$net" -S "$SIM_TMP/st3" -s "$SIM_TMP/c3.sock" -f "$SIM_TMP/early.fifo" \
	>"$SIM_TMP/out3" 2>&1 &
pid3=$!
bg_register "$pid3"
held() { [ "$(cat "/proc/$pid3/wchan" 2>/dev/null)" = wait_for_partner ]; }
wait_until 20 held || fail "ibsmd not held opening the FIFO: $(cat "/proc/$pid3/wchan" 2>&1) $(tail -n 3 "$SIM_TMP/out3")"
kill -USR1 "$pid3"
sleep 0.2
grep -q '^State:.*[RSD]' "/proc/$pid3/status" 2>/dev/null ||
	fail "SIGUSR1 during start-up ended ibsmd: $(grep '^State' "/proc/$pid3/status" 2>&1) $(tail -n 3 "$SIM_TMP/out3")"
cat "$SIM_TMP/early.fifo" >"$SIM_TMP/early.log" &
bg_register $!
wait_until 20 grep -q 'heavy sweep done' "$SIM_TMP/early.log" ||
	fail "no sweep after SIGUSR1 during start-up: $(tail -n 3 "$SIM_TMP/early.log" "$SIM_TMP/out3" 2>&1)"
kill -TERM "$pid3"
pass "SIGUSR1 while ibsmd is held in its start-up (opening a FIFO for -f): it came up"

# the shipped logrotate snippet: read without an error (and a broken copy not)
command -v logrotate >/dev/null || fail "logrotate missing (make deps)"
lr="$SIM_ROOT/etc/ibsmd.logrotate"
out=$(logrotate -d -s "$SIM_TMP/lr.state" "$lr" 2>&1) || fail "logrotate -d: $out"
! grep -q '^error' <<<"$out" || fail "logrotate -d $lr: $(grep '^error' <<<"$out")"
sed 's/^\tweekly$/\tweakly/' "$lr" >"$SIM_TMP/broken.lr"
logrotate -d -s "$SIM_TMP/lr.state" "$SIM_TMP/broken.lr" 2>&1 | grep -q "^error: .*unknown option 'weakly'" ||
	fail "logrotate -d did not see a broken copy"
# its postrotate is sh (logrotate runs it with /bin/sh -c): it parses, and
# names the units and the process
post=$(sed -n '/^\tpostrotate$/,/^\tendscript$/p' "$lr" | sed '1d;$d')
sh -n -c "$post" || fail "postrotate does not parse: $post"
grep -q "systemctl --quiet kill --kill-whom=main" <<<"$post" && grep -q "ibsmd.service 'ibsmd@\*.service'" <<<"$post" &&
	grep -q 'pkill -USR1 -x ibsmd' <<<"$post" || fail "postrotate: $post"
# a real rotation, the snippet aimed at this test's file, its signal at this daemon
rm -f "$log".*
sed -e "s|^/var/log/ibsmd.log /var/log/ibsmd-\*.log {|$log {|" \
	-e '/^\tpostrotate$/,/^\tendscript$/c\	postrotate\n\t\tkill -USR1 '"$pid"'\n\tendscript' \
	"$lr" >"$SIM_TMP/test.lr"
grep -q "^$log {" "$SIM_TMP/test.lr" && grep -q "kill -USR1 $pid" "$SIM_TMP/test.lr" ||
	fail "the snippet's copy: $(cat "$SIM_TMP/test.lr")"
chmod 644 "$SIM_TMP/test.lr"
out=$(logrotate -f -s "$SIM_TMP/lr.state" "$SIM_TMP/test.lr" 2>&1) || fail "logrotate -f: $out"
[ -s "$log.1" ] || fail "logrotate: no $log.1 ($(ls "$SIM_TMP"))"
wait_until 10 test -e "$log" || fail "logrotate's postrotate: no new $log"
ctl sweep --heavy >/dev/null
wait_until 10 grep -q 'heavy sweep done' "$log" || fail "after logrotate: nothing in the new $log"
pass "etc/ibsmd.logrotate: logrotate -d clean; a forced rotation moved the file to .1 (delaycompress) and the daemon writes a new one"
