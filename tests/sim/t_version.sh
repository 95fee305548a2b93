#!/bin/bash
# One version, the top-level VERSION file, no fabric (the emulator, a
# second): `ibsmd --version`, `ibsmctl --version`, `ibsmctl status`'s
# version (text and JSON) and the metrics' ibsmd_build_info label all say
# it; ibsmctl built aside with another version (make VERSION_STR=..., what
# the Makefile reads from VERSION) says that one.
. "$(dirname "$0")/common.sh"

[ -s "$SIM_ROOT/VERSION" ] || fail "no VERSION file"
v=$(cat "$SIM_ROOT/VERSION")
[[ $v =~ ^[0-9]+(\.[0-9]+)+([~+.-][0-9A-Za-z.~+-]+)?$ ]] || fail "VERSION '$v' is not a version"
[ "$("$IBSMD" --version)" = "ibsmd $v" ] && [ "$("$IBSMD" -V)" = "ibsmd $v" ] ||
	fail "ibsmd --version: '$("$IBSMD" --version)', VERSION '$v'"
[ "$("$IBSMCTL" --version)" = "ibsmctl $v" ] && [ "$("$IBSMCTL" -V)" = "ibsmctl $v" ] ||
	fail "ibsmctl --version: '$("$IBSMCTL" --version)', VERSION '$v'"

sock="$SIM_TMP/ctl.sock"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
"$IBSMD" --emulate "$SIM_ROOT/etc/demo.net" -S "$SIM_TMP/st" -s "$sock" >"$SIM_TMP/out" 2>&1 &
bg_register $!
wait_until 10 ctl status >/dev/null 2>&1 || fail "the daemon does not answer: $(tail -n 3 "$SIM_TMP/out")"
[ "$(ctl --json status | jq -r .version)" = "$v" ] || fail "status --json: version $(ctl --json status | jq .version)"
ctl status | grep -q "^ibsmd $v, up " || fail "status: $(ctl status | head -n 1)"
ctl metrics | grep -qx "ibsmd_build_info{version=\"$v\"} 1" ||
	fail "metrics: $(ctl metrics | grep build_info)"
pass "VERSION $v: ibsmd -V, ibsmctl -V, status (text, JSON) and ibsmd_build_info agree"

# the Makefile passes the version to the compiler: ibsmctl built aside with another
other="$v.99-test"
make -s -C "$SIM_ROOT" BUILD="$SIM_TMP/b" VERSION_STR="$other" "$SIM_TMP/b/ibsmctl" >"$SIM_TMP/make.out" 2>&1 ||
	fail "make ibsmctl with VERSION_STR=$other: $(tail -n 3 "$SIM_TMP/make.out")"
[ "$("$SIM_TMP/b/ibsmctl" --version)" = "ibsmctl $other" ] ||
	fail "built with version $other, ibsmctl says '$("$SIM_TMP/b/ibsmctl" --version)'"
pass "ibsmctl built with VERSION_STR=$other says so: the version comes from the Makefile"
