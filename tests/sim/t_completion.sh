#!/bin/bash
# etc/ibsmctl.bash-completion in a non-interactive bash, against a daemon
# on the emulator (no ibsim, a second or two): `ibsmctl ro<TAB>` gives
# routes; `ibsmctl -s SOCK routes <TAB>` the daemon's switches (their node
# descriptions as `ibsmctl --json topology` lists them; 0x<TAB> their
# GUIDs); the commands offered are the ones the daemon knows; operations
# (vm <TAB>) and options (status --<TAB>) from ibsmctl's help; a daemon
# that does not answer: nothing offered, nothing printed, in a second.
. "$(dirname "$0")/common.sh"

comp="$SIM_ROOT/etc/ibsmctl.bash-completion"
[ -s "$comp" ] || fail "no $comp"
# complete WORD...: what _ibsmctl offers for the last word, one a line
complete_words() {
	PATH="$SIM_ROOT/build:$PATH" bash -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_ibsmctl || exit 1
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}

out=$(complete_words ibsmctl ro 2>&1)
[ "$out" = routes ] || fail "ibsmctl ro<TAB>: '$out'"
pass "ibsmctl ro<TAB>: routes"

sock="$SIM_TMP/ctl.sock"
ctl() { timeout 10 "$IBSMCTL" -s "$sock" "$@"; }
net="$SIM_TMP/f.net"
gen ftree2 --radix 8 -o "$net"
"$IBSMD" --emulate "$net" -S "$SIM_TMP/st" -s "$sock" >"$SIM_TMP/out" 2>&1 &
bg_register $!
wait_until 10 ctl status >/dev/null 2>&1 || fail "the daemon does not answer: $(tail -n 3 "$SIM_TMP/out")"

want=$(ctl --json topology | jq -r '.switches[].desc' | sort)
[ "$(wc -l <<<"$want")" -ge 4 ] || fail "topology lists $(wc -l <<<"$want") switches"
got=$(complete_words ibsmctl -s "$sock" routes "" 2>&1 | sort)
[ "$got" = "$want" ] || fail "ibsmctl routes <TAB>: '$(tr '\n' ' ' <<<"$got")', the daemon's switches '$(tr '\n' ' ' <<<"$want")'"
first=$(head -n 1 <<<"$want")
got1=$(complete_words ibsmctl -s "$sock" routes "${first:0:4}" 2>&1 | sort)
[ "$got1" = "$(grep "^${first:0:4}" <<<"$want")" ] || fail "routes ${first:0:4}<TAB>: '$got1'"
wantg=$(ctl --json topology | jq -r '.switches[].guid' | sort)
gotg=$(complete_words ibsmctl --socket "$sock" routes 0x 2>&1 | sort)
[ "$gotg" = "$wantg" ] || fail "ibsmctl routes 0x<TAB>: '$(tr '\n' ' ' <<<"$gotg")'"
pass "ibsmctl -s SOCK routes <TAB>: the daemon's $(wc -l <<<"$want") switches ($(head -n 3 <<<"$want" | tr '\n' ' ')...); 0x<TAB>: their GUIDs"

# the commands offered: the ones the daemon names when it refuses one
known=$(ctl frobnicate 2>&1 | sed -n "s/^ibsmctl: unknown command 'frobnicate' (\(.*\))$/\1/p" | tr -d ' ' | tr ',' '\n' | sort)
[ -n "$known" ] || fail "the daemon names no commands: $(ctl frobnicate 2>&1)"
got=$(complete_words ibsmctl "" | sort)
[ "$got" = "$known" ] || fail "ibsmctl <TAB>: '$(tr '\n' ' ' <<<"$got")', the daemon's '$(tr '\n' ' ' <<<"$known")'"
[ "$(complete_words ibsmctl vm "" | tr '\n' ' ')" = "create destroy list migrate " ] ||
	fail "ibsmctl vm <TAB>: $(complete_words ibsmctl vm "" | tr '\n' ' ')"
[ "$(complete_words ibsmctl status -- | tr '\n' ' ')" = "--verbose --json " ] ||
	fail "ibsmctl status --<TAB>: $(complete_words ibsmctl status -- | tr '\n' ' ')"
[ "$(complete_words ibsmctl job start J --w)" = "--wait" ] ||
	fail "ibsmctl job start J --w<TAB>: $(complete_words ibsmctl job start J --w)"
pass "ibsmctl <TAB>: the daemon's $(wc -l <<<"$known") commands; vm <TAB>, status --<TAB>, job start J --w<TAB> from the help"

start=$SECONDS
out=$(complete_words ibsmctl -s "$SIM_TMP/none.sock" routes "" 2>&1)
[ -z "$out" ] && [ $((SECONDS - start)) -le 2 ] || fail "no daemon: '$out' in $((SECONDS - start)) s"
out=$(complete_words ibsmctl -s "$SIM_TMP/none.sock" vm destroy "" 2>&1)
[ -z "$out" ] || fail "no daemon, vm destroy <TAB>: '$out'"
pass "no daemon on the socket: nothing offered, nothing printed"
