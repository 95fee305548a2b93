#!/bin/bash
# etc/ibsmctl.bash-completion in a non-interactive bash, against a daemon
# on the emulator (no ibsim, a second or two): `ibsmctl ro<TAB>` gives
# routes; `ibsmctl -s SOCK routes <TAB>` the daemon's switches (their node
# descriptions as `ibsmctl --json topology` lists them; 0x<TAB> their
# GUIDs; a name with blanks, ';' and ':' shell-quoted, and with
# bash-completion loaded, completed after the ':' as readline wants it);
# `ibsmctl vm migrate <TAB>` the VMs `vm list --json` lists; `job
# end <TAB>` the jobs `job list --json` lists; the
# commands offered are the ones the daemon knows; operations
# (vm <TAB>) and options (status --<TAB>) from ibsmctl's help; a daemon
# that does not answer: nothing offered, nothing printed, in a second.
. "$(dirname "$0")/common.sh"

comp="$SIM_ROOT/etc/ibsmctl.bash-completion"
[ -s "$comp" ] || fail "no $comp"
# complete WORD...: what _ibsmctl offers for the last word, one a line;
# with BASHCOMP set, bash-completion's own functions loaded first
BASHCOMP_LIB=/usr/share/bash-completion/bash_completion
complete_words() {
	PATH="$SIM_ROOT/build:$PATH" bash -c '
		if [ -n "$BASHCOMP" ]; then
			source "$BASHCOMP" || exit 1
			COMP_LINE="${*:2}"
			COMP_POINT=${#COMP_LINE}
		fi
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
gen hyper -o "$net"
# the first leaf named as a real switch might be: blanks, ';' and ':'
printf '0x0002c90100000000 "MF0;sw01:SX6036 r1"\n' >"$SIM_TMP/names"
printf 'virtualization: {lid_scheme: dynamic, vswitches: ["V-*"]}\nnode_name_map: %s\n' \
	"$SIM_TMP/names" >"$SIM_TMP/p.yaml"
"$IBSMD" --emulate "$net" -c "$SIM_TMP/p.yaml" -S "$SIM_TMP/st" -s "$sock" >"$SIM_TMP/out" 2>&1 &
bg_register $!
wait_until 10 ctl status >/dev/null 2>&1 || fail "the daemon does not answer: $(tail -n 3 "$SIM_TMP/out")"

want=$(ctl --json topology | jq -r '.switches[].desc' | while IFS= read -r n; do printf '%q\n' "$n"; done | sort)
[ "$(wc -l <<<"$want")" -ge 4 ] && grep -qxF 'MF0\;sw01:SX6036\ r1' <<<"$want" ||
	fail "topology lists $(wc -l <<<"$want") switches: $(tr '\n' ' ' <<<"$want")"
got=$(complete_words ibsmctl -s "$sock" routes "" 2>&1 | sort)
[ "$got" = "$want" ] || fail "ibsmctl routes <TAB>: '$(tr '\n' ' ' <<<"$got")', the daemon's switches '$(tr '\n' ' ' <<<"$want")'"
got1=$(complete_words ibsmctl -s "$sock" routes L1 2>&1 | sort)
[ -n "$got1" ] && [ "$got1" = "$(grep '^L1' <<<"$want")" ] || fail "routes L1<TAB>: '$got1'"
got1=$(complete_words ibsmctl -s "$sock" routes MF 2>&1)
[ "$got1" = 'MF0\;sw01:SX6036\ r1' ] || fail "routes MF<TAB>: '$got1'"
[ -r "$BASHCOMP_LIB" ] || fail "no $BASHCOMP_LIB (bash-completion: make deps)"
got1=$(BASHCOMP=$BASHCOMP_LIB complete_words ibsmctl -s "$sock" routes 'MF0\;sw01:S' 2>&1)
[ "$got1" = 'SX6036\ r1' ] || fail "with bash-completion, routes MF0\;sw01:S<TAB>: '$got1'"
got1=$(BASHCOMP=$BASHCOMP_LIB complete_words ibsmctl --socket="$sock" routes L1 2>&1 | sort)
[ "$got1" = "$(grep '^L1' <<<"$want")" ] || fail "with bash-completion, --socket=SOCK routes L1<TAB>: '$got1'"
wantg=$(ctl --json topology | jq -r '.switches[].guid' | sort)
gotg=$(complete_words ibsmctl --socket "$sock" routes 0x 2>&1 | sort)
[ "$gotg" = "$wantg" ] || fail "ibsmctl routes 0x<TAB>: '$(tr '\n' ' ' <<<"$gotg")'"
pass "ibsmctl -s SOCK routes <TAB>: the daemon's $(wc -l <<<"$want") switches ($(head -n 3 <<<"$want" | tr '\n' ' ')...); 0x<TAB>: their GUIDs; MF<TAB>: MF0\;sw01:SX6036\ r1 (bash-completion loaded: after the ':')"

for vm in vm-a vm.b web_1; do
	ctl vm create "$vm" --hypervisor V-1-0 >/dev/null || fail "vm create $vm"
done
want=$(ctl --json vm list | jq -r '.vms[].name' | sort)
got=$(complete_words ibsmctl -s "$sock" vm migrate "" 2>&1 | sort)
[ "$(wc -l <<<"$want")" -eq 3 ] && [ "$got" = "$want" ] ||
	fail "ibsmctl vm migrate <TAB>: '$(tr '\n' ' ' <<<"$got")', vm list: '$(tr '\n' ' ' <<<"$want")'"
[ "$(complete_words ibsmctl -s "$sock" vm destroy w)" = web_1 ] ||
	fail "ibsmctl vm destroy w<TAB>: $(complete_words ibsmctl -s "$sock" vm destroy w)"
pass "ibsmctl -s SOCK vm migrate <TAB>: the daemon's VMs ($(tr '\n' ' ' <<<"$got"))"

# job end|loads <TAB>: the live jobs' IDs, from a daemon routing jobs on
# a small XGFT
jnet="$SIM_TMP/x.net"
jsock="$SIM_TMP/j.sock"
gen xgft --m 2,2,4 --w 1,2,2 -o "$jnet"
printf 'routing: {engine: dmodk, jobs: least-max-load}\n' >"$SIM_TMP/j.yaml"
"$IBSMD" --emulate "$jnet" -c "$SIM_TMP/j.yaml" -S "$SIM_TMP/jst" -s "$jsock" >"$SIM_TMP/jout" 2>&1 &
bg_register $!
jctl() { timeout 10 "$IBSMCTL" -s "$jsock" "$@"; }
wait_until 10 jctl status >/dev/null 2>&1 || fail "the jobs daemon does not answer: $(tail -n 3 "$SIM_TMP/jout")"
jctl job start 17 --nodes 'H-[0-3]' --wait >/dev/null || fail "job start 17: $(jctl job start 17 --nodes 'H-[0-3]' 2>&1)"
jctl job start big-2 --nodes 'H-[8-11]' --wait >/dev/null || fail "job start big-2"
want=$(jctl --json job list | jq -r '.jobs[].id' | sort)
got=$(complete_words ibsmctl -s "$jsock" job end "" 2>&1 | sort)
[ "$(wc -l <<<"$want")" -eq 2 ] && [ "$got" = "$want" ] ||
	fail "ibsmctl job end <TAB>: '$(tr '\n' ' ' <<<"$got")', job list: '$(tr '\n' ' ' <<<"$want")'"
[ "$(complete_words ibsmctl -s "$jsock" job loads b)" = big-2 ] ||
	fail "ibsmctl job loads b<TAB>: $(complete_words ibsmctl -s "$jsock" job loads b)"
pass "ibsmctl -s SOCK job end <TAB>: the live jobs ($(tr '\n' ' ' <<<"$got")); job loads b<TAB>: big-2"

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

# a node description with blanks and shell characters comes back quoted
got=$(bash -c 'source "$1"; _ibsmctl_reply "MF0;s" < <(printf "%s\n" "MF0;sw 1" "MF1;sw 2"); printf "%s\n" "${COMPREPLY[@]}"' _ "$comp")
[ "$got" = 'MF0\;sw\ 1' ] || fail "a name with blanks: '$got'"
pass "a name with blanks and ';': offered as $got"

start=$SECONDS
out=$(complete_words ibsmctl -s "$SIM_TMP/none.sock" routes "" 2>&1)
[ -z "$out" ] && [ $((SECONDS - start)) -le 2 ] || fail "no daemon: '$out' in $((SECONDS - start)) s"
out=$(complete_words ibsmctl -s "$SIM_TMP/none.sock" vm destroy "" 2>&1)
[ -z "$out" ] || fail "no daemon, vm destroy <TAB>: '$out'"
pass "no daemon on the socket: nothing offered, nothing printed"
