#!/bin/sh
# Installs the Debian packages the build and the tests need, only those missing.
# debhelper and lintian: make package and its test (tests/sim/t_deb.sh); no
# fakeroot (debian/control: Rules-Requires-Root: no).
set -e
PKGS="build-essential pkg-config libibumad-dev libibmad-dev libevent-dev libyaml-dev
libjansson-dev libsystemd-dev libsodium-dev check ibsim-utils libumad2sim0 infiniband-diags opensm
python3 procps python3-prometheus-client prometheus curl graphviz libgraphviz-dev chromium mandoc systemd logrotate bash-completion
slurmctld slurmd slurm-client munge debhelper lintian"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "make deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
# mandoc's database of the pages installed: man page references (mandoc
# -Tlint, t_pkg.sh) are looked up in it, Slurm's among them
$SUDO makewhatis /usr/share/man
