#!/bin/sh
# A stand-in for ibsmctl, to test etc/slurm's prolog and epilog under a
# real Slurm without a daemon (t_slurm.sh): appends one line per call,
# "SECONDS.NANOSECONDS ARGS...", to FAKE_IBSMCTL_DIR/calls; answers
# `job start` with "ready" after FAKE_IBSMCTL_DELAY seconds (default 0)
# and `job end` with nothing.  While FAKE_IBSMCTL_DIR/fail exists every
# call fails: its content on stderr, exit 1 (a daemon that refuses).
dir=${FAKE_IBSMCTL_DIR:?}
echo "$(date +%s.%N) $*" >>"$dir/calls"
if [ -e "$dir/fail" ]; then
	cat "$dir/fail" >&2
	exit 1
fi
case " $* " in
*" job start "*)
	sleep "${FAKE_IBSMCTL_DELAY:-0}"
	echo ready
	;;
esac
