#!/bin/bash
# Job-aware routing on the 128-host XGFT(3;4,4,8;1,4,4): two jobs on
# scattered nodes (a 48-node 3dnn, a 64-node ring; D-mod-K would load a
# link 2.7 for both), judged as t_jobs.sh judges them (jobs_scenario in
# jobs_lib.sh): exactly the planned entries in dump_fts, the loads of the
# dumped tables equal to `job loads`, the same after a restart and a
# failover, the base tables back after both ends.
. "$(dirname "$0")/jobs_lib.sh"

jobs_scenario "--m 4,4,8 --w 1,4,4" \
	3dnn "14 46 71 36 95 113 84 17 4 51 99 76 94 122 87 80 38 124 7 16 21 41 20 79 105 61 110 86 22 9 39 52 88 74 50 107 33 10 6 59 96 5 45 43 35 101 11 66" \
	ring "112 125 47 90 30 126 116 25 121 65 31 81 68 18 19 24 85 64 42 120 73 23 111 53 103 37 58 82 78 44 104 70 119 56 28 67 91 54 27 114 1 69 115 93 2 109 40 13 75 29 92 127 117 89 0 98 118 77 55 49 106 3 62 12"
