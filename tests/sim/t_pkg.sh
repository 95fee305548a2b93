#!/bin/bash
# Packaging, no fabric (a few seconds): `make install` under DESTDIR puts
# every file where PREFIX says (the bash completion and the logrotate snippet
# among them) and fills the units' ExecStart/ExecReload;
# `systemd-analyze verify` on ibsmd.service and on ibsmd@.service's
# instances (a port GUID, CA:PORT; ExecStart at the built binary) is clean,
# and not on a broken copy; `ibsmd --instance` takes the port, state
# directory and socket from the name and refuses a name of neither form; `mandoc -Tlint -Wstyle man/*` reports
# nothing (cross-references to the pages of man/ resolved through the
# installed tree); every --help option is in its page's SYNOPSIS, every
# policy key in ibsmd.yaml.5 (man_sync.py); `make uninstall` with the same
# DESTDIR leaves nothing behind but a file the operator added; the sample
# lane agent (etc/ibsm-lanes.sh) is installed and does what its contract says;
# Slurm's prolog and epilog (etc/slurm) are installed where the installed
# slurm.conf lines name them.
. "$(dirname "$0")/common.sh"

cd "$SIM_ROOT" || fail "no $SIM_ROOT"
dest="$SIM_TMP/dest"
prefix=/opt/ibsmd
mkdir -p "$dest"
make -s install DESTDIR="$dest" PREFIX="$prefix" >"$SIM_TMP/install.out" 2>&1 ||
	fail "make install: $(tail -n 5 "$SIM_TMP/install.out")"
unit="$dest$prefix/lib/systemd/system/ibsmd.service"
for f in sbin/ibsmd bin/ibsmctl bin/ibsm-listen share/man/man8/ibsmd.8 \
	share/man/man8/ibsmctl.8 share/man/man8/ibsm-listen.8 share/man/man5/ibsmd.yaml.5 \
	lib/systemd/system/ibsmd.service lib/systemd/system/ibsmd@.service lib/sysusers.d/ibsmd.conf \
	share/bash-completion/completions/ibsmctl; do
	[ -s "$dest$prefix/$f" ] || fail "make install: no $prefix/$f"
done
for f in ibsmd/ibsmd.yaml.example logrotate.d/ibsmd; do
	[ -s "$dest/etc/$f" ] || fail "make install: no /etc/$f"
done
grep -qx "ExecStart=$prefix/sbin/ibsmd" "$unit" &&
	grep -qx "ExecReload=$prefix/bin/ibsmctl reload" "$unit" ||
	fail "unit: $(grep '^Exec' "$unit")"
tunit="$dest$prefix/lib/systemd/system/ibsmd@.service"
grep -qx "ExecStart=$prefix/sbin/ibsmd --instance %i" "$tunit" &&
	grep -qx "ExecReload=$prefix/bin/ibsmctl -s /run/ibsmd/%i.sock reload" "$tunit" &&
	grep -qx "StateDirectory=ibsmd/%i" "$tunit" && grep -qx "StateDirectory=ibsmd" "$unit" &&
	grep -qx "Conflicts=opensm.service" "$unit" && grep -qx "Conflicts=opensm.service" "$tunit" ||
	fail "units: $(grep -hE '^(Exec|StateDir|Conflicts)' "$unit" "$tunit")"
! grep -q '@[A-Z_]*@' "$unit" "$tunit" || fail "units: a placeholder left: $(grep '@[A-Z_]*@' "$unit" "$tunit")"
grep -qx 'g ibsmd - -' "$dest$prefix/lib/sysusers.d/ibsmd.conf" || fail "sysusers.d/ibsmd.conf: no 'g ibsmd - -'"
n=$(find "$dest" -type f | wc -l)
pass "make install DESTDIR PREFIX=$prefix: $n files, ExecStart=$prefix/sbin/ibsmd, ExecReload=ibsmctl reload; ibsmd@.service: --instance %i; sysusers.d: g ibsmd"

# --instance NAME: the port, state directory and socket from NAME (the
# policy: /etc/ibsmd/NAME.yaml if it exists, t_deb.sh); neither form refused
out=$("$IBSMD" --instance mlx4_0:1 -n -c "$SIM_ROOT/etc/ibsmd.yaml" 2>&1) &&
	grep -qx 'instance mlx4_0:1: CA mlx4_0 port 1, state /var/lib/ibsmd/mlx4_0:1, socket /run/ibsmd/mlx4_0:1.sock' <<<"$out" ||
	fail "ibsmd --instance mlx4_0:1 -n: $out"
out=$("$IBSMD" --instance 0x0002c903000a0b0c -n -c "$SIM_ROOT/etc/ibsmd.yaml" -S "$SIM_TMP/st" 2>&1) &&
	grep -qx "instance 0x0002c903000a0b0c: port GUID 0x0002c903000a0b0c, state $SIM_TMP/st, socket /run/ibsmd/0x0002c903000a0b0c.sock" <<<"$out" ||
	fail "ibsmd --instance 0x0002c903000a0b0c -n -S: $out"
for bad in mlx4_0 mlx4_0:0 mlx4_0:255 ../x:1 0x 0x0 0x00000000000000001 0xg1; do
	out=$("$IBSMD" --instance "$bad" -n 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "bad --instance '$bad': a port GUID (0x0002c903000a0b0c) or CA:PORT (mlx5_0:1)" <<<"$out" ||
		fail "ibsmd --instance $bad: exit $rc, $out"
done
out=$("$IBSMD" --instance mlx4_0:1 -g 0x2 -n 2>&1) && fail "--instance with -g accepted: $out"
pass "ibsmd --instance: CA:PORT and a GUID give port, state and socket; 8 bad names refused (exit 2), -g with it too"

# The sample lane agent, installed executable beside the policy example, as
# ibsm-listen --exec runs it: a 69 lane order reaches the site hook as
# DLID LMC SL; without a hook the due move is logged on stderr only; a
# notice that is no lane order is left alone.
agent="$dest/etc/ibsmd/ibsm-lanes.sh.example"
[ -x "$agent" ] || fail "make install: no executable /etc/ibsmd/ibsm-lanes.sh.example"
printf '#!/bin/sh\necho "$* $IBSM_SLID" >>"%s"\n' "$SIM_TMP/hook.out" >"$SIM_TMP/hook"
chmod +x "$SIM_TMP/hook"
lane() { env -i PATH="$PATH" IBSM_TRAP="$1" IBSM_LANE=1 IBSM_SLID=5 IBSM_DLID=12 \
	IBSM_LMC=2 IBSM_SL="$2" ${3:+IBSM_LANES_HOOK="$3"} "$agent"; }
out=$(lane 69 1 "$SIM_TMP/hook" 2>&1) && [ -z "$out" ] && [ "$(cat "$SIM_TMP/hook.out")" = "12 2 1 5" ] ||
	fail "lane agent with a hook: '$out', the hook got '$(cat "$SIM_TMP/hook.out" 2>/dev/null)'"
out=$(lane 68 0 2>"$SIM_TMP/agent.err") && [ -z "$out" ] &&
	grep -q 'port LID 5: QPs towards LIDs 12-15 to SL 0 (unpath' "$SIM_TMP/agent.err" ||
	fail "lane agent without a hook: stdout '$out', stderr '$(cat "$SIM_TMP/agent.err")'"
out=$(env -i IBSM_TRAP=69 IBSM_DLID=12 IBSM_SL=1 IBSM_LANES_HOOK="$SIM_TMP/hook" "$agent" 2>&1) &&
	[ -z "$out" ] && [ "$(wc -l <"$SIM_TMP/hook.out")" -eq 1 ] ||
	fail "lane agent on a path notice: '$out', the hook ran $(wc -l <"$SIM_TMP/hook.out") times"
pass "ibsm-lanes.sh.example: a 69 lane order runs the hook as '$(cut -d" " -f1-3 "$SIM_TMP/hook.out")', none logs '$(sed 's/^ibsm-lanes: //' "$SIM_TMP/agent.err")'"

# Slurm's scripts: PrologSlurmctld and EpilogSlurmctld of the installed
# slurm.conf lines are the installed scripts, the epilog the same script
snippet="$dest/etc/ibsmd/slurm.conf.ibsmd"
[ "$(grep -v '^#' "$snippet" 2>/dev/null)" = "PrologSlurmctld=$prefix/libexec/ibsmd/ibsmd-prolog
EpilogSlurmctld=$prefix/libexec/ibsmd/ibsmd-epilog" ] || fail "slurm.conf.ibsmd: $(grep -v '^#' "$snippet")"
[ -x "$dest$prefix/libexec/ibsmd/ibsmd-prolog" ] &&
	[ "$(readlink -f "$dest$prefix/libexec/ibsmd/ibsmd-epilog")" = "$dest$prefix/libexec/ibsmd/ibsmd-prolog" ] ||
	fail "make install: no $prefix/libexec/ibsmd/ibsmd-prolog, or ibsmd-epilog not a link to it"
pass "slurm.conf.ibsmd: PrologSlurmctld and EpilogSlurmctld at the installed $prefix/libexec/ibsmd scripts"

# systemd-analyze verify: the unit with ExecStart at the built binary
command -v systemd-analyze >/dev/null || fail "systemd-analyze missing (make deps)"
sed -e "s|^ExecStart=.*|ExecStart=$SIM_ROOT/build/ibsmd|" \
	-e "s|^ExecReload=.*|ExecReload=$SIM_ROOT/build/ibsmctl reload|" "$unit" >"$SIM_TMP/ibsmd.service"
grep -q '^Type=notify$' "$SIM_TMP/ibsmd.service" && grep -q '^WatchdogSec=' "$SIM_TMP/ibsmd.service" &&
	grep -q '^Restart=on-failure$' "$SIM_TMP/ibsmd.service" &&
	grep -q '^DeviceAllow=char-infiniband_mad rw$' "$SIM_TMP/ibsmd.service" ||
	fail "unit: Type=notify, WatchdogSec, Restart=on-failure, DeviceAllow umad expected"
# man:ibsmd(8) and the others of Documentation= are looked up in the installed tree
sed -e "s|^ExecStart=.*|ExecStart=$SIM_ROOT/build/ibsmd --instance %i|" \
	-e "s|^ExecReload=.*|ExecReload=$SIM_ROOT/build/ibsmctl -s /run/ibsmd/%i.sock reload|" "$tunit" \
	>"$SIM_TMP/ibsmd@.service"
# FILE:NAME: the template loaded as the instance NAME
out=$(MANPATH="$dest$prefix/share/man:/usr/share/man" systemd-analyze verify "$SIM_TMP/ibsmd.service" \
	"$SIM_TMP/ibsmd@.service:ibsmd@0x0002c903000a0b0c.service" \
	"$SIM_TMP/ibsmd@.service:ibsmd@mlx4_0:1.service" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify (exit $rc): $out"
mkdir -p "$SIM_TMP/broken"
sed 's/^Type=notify$/Type=notfy/' "$SIM_TMP/ibsmd.service" >"$SIM_TMP/broken/ibsmd.service"
out=$(MANPATH="$dest$prefix/share/man:/usr/share/man" systemd-analyze verify "$SIM_TMP/broken/ibsmd.service" 2>&1)
grep -q "notfy" <<<"$out" || fail "systemd-analyze did not see Type=notfy: $out"
sed 's/^Type=notify$/Type=notfy/' "$SIM_TMP/ibsmd@.service" >"$SIM_TMP/broken/ibsmd@.service"
out=$(MANPATH="$dest$prefix/share/man:/usr/share/man" systemd-analyze verify \
	"$SIM_TMP/broken/ibsmd@.service:ibsmd@mlx4_0:1.service" 2>&1)
grep -q "ibsmd@mlx4_0:1.service:.*notfy" <<<"$out" || fail "systemd-analyze did not see the instance's Type=notfy: $out"
pass "systemd-analyze verify: ibsmd.service, ibsmd@0x0002c903000a0b0c and ibsmd@mlx4_0:1 are clean (and Type=notfy copies are not)"

# mandoc lint: the pages' cross-references resolve through the installed tree
command -v mandoc >/dev/null && command -v makewhatis >/dev/null || fail "mandoc missing (make deps)"
makewhatis "$dest$prefix/share/man" || fail "makewhatis $dest$prefix/share/man"
out=$(MANPATH="$dest$prefix/share/man:/usr/share/man" mandoc -Tlint -Wstyle man/* 2>&1)
rm -f "$dest$prefix/share/man/mandoc.db"	# the test's, not install's
[ -z "$out" ] || fail "mandoc -Tlint -Wstyle man/*:
$out"
out=$(python3 tests/sim/man_sync.py "$SIM_ROOT" 2>"$SIM_TMP/man_sync.err") ||
	fail "the man pages and the programs disagree:
$out"
pass "mandoc -Tlint -Wstyle man/*: nothing; $(cat "$SIM_TMP/man_sync.err")"

echo "policy: {}" >"$dest/etc/ibsmd/ibsmd.yaml"	# the operator's own
make -s uninstall DESTDIR="$dest" PREFIX="$prefix" >"$SIM_TMP/uninstall.out" 2>&1 ||
	fail "make uninstall: $(tail -n 5 "$SIM_TMP/uninstall.out")"
left=$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "./etc ./etc/ibsmd ./etc/ibsmd/ibsmd.yaml " ] || fail "make uninstall left: $left"
rm "$dest/etc/ibsmd/ibsmd.yaml"
make -s install DESTDIR="$dest" PREFIX="$prefix" >/dev/null 2>&1 &&
	make -s uninstall DESTDIR="$dest" PREFIX="$prefix" >/dev/null 2>&1 || fail "install, uninstall again"
left=$(find "$dest" -mindepth 1)
[ -z "$left" ] || fail "make uninstall left: $left"
pass "make uninstall: nothing left under DESTDIR (the operator's ibsmd.yaml kept until removed)"
