#!/bin/bash
# The Debian packages, on this machine (root; one package build, ~1 min):
# `make package` makes ibsmd and ibsm-listen's .deb files, lintian finds
# no error or warning (debian/*.lintian-overrides say why for what they
# hide); installed, both units pass `systemd-analyze verify` (ibsmd.service
# and an ibsmd@ instance of each form), the postinst made the group ibsmd
# (the example policy's control.group then passes `ibsmd -n`), an
# instance's policy is /etc/ibsmd/INSTANCE.yaml, the programs print the
# version of debian/changelog; an upgrade from an older version keeps
# /var/lib/ibsmd/guid2lid, `dpkg -r` keeps it, `dpkg -P` leaves the files
# as they were before.  The packages are purged whatever happens (the
# EXIT trap); OpenSM's package, if installed, is left alone.
. "$(dirname "$0")/lib.sh"

cd "$SIM_ROOT" || fail "no $SIM_ROOT"
[ "$(id -u)" -eq 0 ] || fail "dpkg -i needs root"
for c in dpkg-buildpackage dh lintian systemd-analyze; do
	command -v "$c" >/dev/null || fail "$c missing (make deps)"
done
dpkg-query -W -f='${Status}' ibsmd ibsm-listen 2>/dev/null | grep -q installed &&
	fail "ibsmd's packages are installed already: this test installs and purges them"
# the purge removes these: someone's state, policy or logs are not the test's
for d in /etc/ibsmd /var/lib/ibsmd /var/log/ibsmd /var/log/ibsmd.log; do
	[ -e "$d" ] && fail "$d exists (make install?): this test's purge would remove it"
done
had_group=$(getent group ibsmd)
inst_policy=/etc/ibsmd/mlx4_0:1.yaml
deb_cleanup() {
	rm -f "$inst_policy"
	dpkg -P ibsmd ibsm-listen >/dev/null 2>&1
	rm -rf /var/lib/ibsmd /var/log/ibsmd /var/log/ibsmd.log	# not there before (above)
	# the group stays on purge (debian/ibsmd.postrm); the test made it
	[ -n "$had_group" ] || groupdel ibsmd 2>/dev/null
	return 0
}
SIM_CLEANUP_HOOKS+=(deb_cleanup)

# Every file where a package or its scripts put files (FHS), but for
# /var/tmp, this tree, and dpkg's and debconf's own books, whose names
# come and go with any package operation (a journal, -old copies); the
# group's line stays in /etc/group (Debian keeps system groups), and
# systemd-sysusers' backups /etc/group- and /etc/gshadow- may appear.
listing() {
	find /etc /usr /var /opt /srv -xdev \( -path /var/tmp -o -path "$SIM_ROOT" \
		-o -path /var/lib/dpkg -o -path /var/cache/debconf \
		-o -path /etc/group- -o -path /etc/gshadow- \) -prune -o -print 2>/dev/null | sort
}
listing >"$SIM_TMP/before"

make -s package >"$SIM_TMP/package.out" 2>&1 || fail "make package: $(tail -n 5 "$SIM_TMP/package.out")"
debs=(build/pkg/ibsmd_*.deb build/pkg/ibsm-listen_*.deb)
[ -f "${debs[0]}" ] && [ -f "${debs[1]}" ] && [ "$(ls build/pkg/*.deb | wc -l)" -eq 2 ] ||
	fail "make package: not the two .deb files: $(ls build/pkg)"
lintian --show-overrides "${debs[@]}" >"$SIM_TMP/lintian.out" 2>&1
grep -E '^[EW]: ' "$SIM_TMP/lintian.out" && fail "lintian: errors or warnings above"
pass "make package: ${debs[*]#build/pkg/}; lintian: no E: or W: ($(grep -c '^O: ' "$SIM_TMP/lintian.out") overridden)"

# The example policy as an admin enables its control group
policy="$SIM_TMP/ibsmd.yaml"
sed -e 's/^# control:$/control:/' -e 's/^#   group: ibsmd$/  group: ibsmd/' etc/ibsmd.yaml >"$policy"
grep -q '^  group: ibsmd$' "$policy" || fail "etc/ibsmd.yaml: no '#   group: ibsmd' line to enable"
if [ -z "$had_group" ]; then
	out=$(build/ibsmd -n -c "$policy" 2>&1) && fail "ibsmd -n passed without the group: $out"
	grep -q "no group 'ibsmd'" <<<"$out" || fail "ibsmd -n without the group: $out"
fi

# An older version of the same package (the upgrade's start), no second build
dpkg-deb -R "${debs[0]}" "$SIM_TMP/prev" || fail "dpkg-deb -R ${debs[0]}"
version=$(dpkg-deb -f "${debs[0]}" Version)
sed -i "s/^Version: .*/Version: $version~prev/" "$SIM_TMP/prev/DEBIAN/control"
dpkg-deb -b "$SIM_TMP/prev" "$SIM_TMP/prev.deb" >/dev/null || fail "dpkg-deb -b prev"
dpkg -i "$SIM_TMP/prev.deb" "${debs[1]}" >"$SIM_TMP/dpkg.out" 2>&1 ||
	fail "dpkg -i $version~prev: $(tail -n 5 "$SIM_TMP/dpkg.out")"
# guid2lid as ibsmd writes it (its OpenSM import), where it keeps it (the
# unit's StateDirectory=, made at its first start)
mkdir "$SIM_TMP/osm"
printf '0x0002c90300000001 0x0001 0x0001\n0x0002c90300000002 0x0005 0x0005\n' >"$SIM_TMP/osm/guid2lid"
/usr/sbin/ibsmd --import-opensm "$SIM_TMP/osm/guid2lid" --import-to "$SIM_TMP/imp" >/dev/null 2>&1 &&
	mkdir -p /var/lib/ibsmd && cp "$SIM_TMP/imp/guid2lid" /var/lib/ibsmd/guid2lid || fail "no guid2lid from ibsmd --import-opensm"
dpkg -i "${debs[@]}" >"$SIM_TMP/dpkg.out" 2>&1 || fail "dpkg -i (upgrade): $(tail -n 5 "$SIM_TMP/dpkg.out")"
[ "$(dpkg-query -W -f='${Version}' ibsmd)" = "$version" ] || fail "not upgraded to $version"
cmp -s "$SIM_TMP/imp/guid2lid" /var/lib/ibsmd/guid2lid || fail "the upgrade changed guid2lid"
pass "upgrade $version~prev -> $version: /var/lib/ibsmd/guid2lid kept ($(grep -c '^0x' /var/lib/ibsmd/guid2lid) entries)"

[ "$(/usr/sbin/ibsmd --version)" = "ibsmd $version" ] &&
	[ "$(/usr/bin/ibsmctl --version)" = "ibsmctl $version" ] ||
	fail "versions: '$(/usr/sbin/ibsmd --version)', '$(/usr/bin/ibsmctl --version)', the package $version"
getent group ibsmd >/dev/null || fail "no group ibsmd after dpkg -i"
out=$(/usr/sbin/ibsmd -n -c /etc/ibsmd/ibsmd.yaml.example 2>&1) &&
	out2=$(/usr/sbin/ibsmd -n -c "$policy" 2>&1) ||
	fail "ibsmd -n on the installed example: $out $out2"
# the operator comforts: the completion where bash-completion looks, the
# logrotate snippet a conffile (an admin's edit survives an upgrade)
[ -s /usr/share/bash-completion/completions/ibsmctl ] ||
	fail "no /usr/share/bash-completion/completions/ibsmctl: $(dpkg -L ibsmd | grep -i compl)"
dpkg-query -W -f='${Conffiles}\n' ibsmd | grep -q '^ /etc/logrotate.d/ibsmd ' ||
	fail "/etc/logrotate.d/ibsmd not a conffile: $(dpkg-query -W -f='${Conffiles}' ibsmd)"
pass "installed: ibsmd --version '$version' as debian/changelog; group ibsmd; ibsmd -n: example OK, with control.group ibsmd OK; completion, logrotate conffile"

# the units, installed, and an instance of each form
dir=$(dirname "$(dpkg -L ibsmd | grep '/systemd/system/ibsmd\.service$')")
[ -f "$dir/ibsmd@.service" ] || fail "no ibsmd@.service installed"
grep -qx 'Conflicts=opensm.service' "$dir/ibsmd.service" || fail "ibsmd.service: no Conflicts=opensm.service"
# FILE:NAME: the template loaded as instance NAME
out=$(systemd-analyze verify "$dir/ibsmd.service" "$dir/ibsmd@.service:ibsmd@0x0002c903000a0b0c.service" \
	"$dir/ibsmd@.service:ibsmd@mlx4_0:1.service" 2>&1) && [ -z "$out" ] ||
	fail "systemd-analyze verify: $out"
grep -qx 'ExecStart=/usr/sbin/ibsmd --instance %i' "$dir/ibsmd@.service" &&
	grep -qx 'StateDirectory=ibsmd/%i' "$dir/ibsmd@.service" ||
	fail "ibsmd@.service: $(grep -E '^(ExecStart|StateDirectory)=' "$dir/ibsmd@.service")"
cp /etc/ibsmd/ibsmd.yaml.example "$inst_policy"
out=$(/usr/sbin/ibsmd --instance mlx4_0:1 -n 2>&1) &&
	grep -qx "$inst_policy: policy OK" <<<"$out" &&
	grep -q 'state /var/lib/ibsmd/mlx4_0:1, socket /run/ibsmd/mlx4_0:1.sock' <<<"$out" ||
	fail "ibsmd --instance mlx4_0:1 -n: $out"
out=$(/usr/sbin/ibsmd --instance mlx4_0 -n 2>&1) && fail "--instance mlx4_0 accepted: $out"
rm -f "$inst_policy"
pass "systemd-analyze verify: ibsmd.service (Conflicts=opensm.service), ibsmd@ on a GUID and on mlx4_0:1; its policy $inst_policy"

echo "a log line" >/var/log/ibsmd.log	# ibsmd -f /var/log/ibsmd.log's
dpkg -r ibsmd ibsm-listen >"$SIM_TMP/dpkg.out" 2>&1 || fail "dpkg -r: $(tail -n 5 "$SIM_TMP/dpkg.out")"
cmp -s "$SIM_TMP/imp/guid2lid" /var/lib/ibsmd/guid2lid && [ -s /var/log/ibsmd.log ] ||
	fail "dpkg -r removed guid2lid or the log"
dpkg -P ibsmd ibsm-listen >"$SIM_TMP/dpkg.out" 2>&1 || fail "dpkg -P: $(tail -n 5 "$SIM_TMP/dpkg.out")"
listing >"$SIM_TMP/after"
diff "$SIM_TMP/before" "$SIM_TMP/after" >"$SIM_TMP/diff" || fail "dpkg -P left or took: $(head -n 20 "$SIM_TMP/diff")"
pass "dpkg -r keeps guid2lid and the log; dpkg -P: the $(wc -l <"$SIM_TMP/after") files of /etc /usr /var /opt /srv as before"
