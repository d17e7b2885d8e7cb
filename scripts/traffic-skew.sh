#!/usr/bin/env bash
# What a hot expert costs on the simulator: alltoallv at 64 ranks on two
# levels (8 servers of 8 ranks), direct and pairwise, 1 MiB a rank, one
# expert a rank in block placement (the hot experts on rank 0), for
# uniform, Zipf 1.0 and 1.5 and one hot expert taking half the tokens.
# Prints one markdown row per traffic and algorithm: time, algbw, busbw
# (nccl-tests' alltoallv definitions), the imbalance, the hot rank, what
# it received (mean over the draws), and the least time its ingress ports
# allow: what it received over its two ports' bandwidths together (inside
# and between servers side by side), which the row's time must not be
# under (the script exits 1, naming the row, where it is).
#
#   scripts/traffic-skew.sh
#   HCCL_TEST=path/to/hccl-test scripts/traffic-skew.sh
#
# Env knobs: LINKS (--link-bw, default 25 GB/s on both levels, the sim's
# default), ITERS (10), WARMUP (2), HIDDEN (4096), HCCL_TEST, KEEP=1.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LINKS=${LINKS:-intra=25GB/s,inter=25GB/s}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-2}
HIDDEN=${HIDDEN:-4096}
intra=${LINKS#intra=}
intra=${intra%%GB/s*}
inter=${LINKS#*inter=}
inter=${inter%%GB/s*}

fail=0
echo "| traffic | algo | time (us) | algbw (GB/s) | busbw (GB/s) | imbalance | hot | hot received (MiB) | its ports allow (us) |"
echo "|---|---|---|---|---|---|---|---|---|"
for spec in uniform "zipf:s=1" "zipf:s=1.5" "hot:hot=1,share=0.5"; do
	for algo in direct pairwise; do
		case $spec in *:*) full="$spec,tokens=0,hidden=$HIDDEN" ;; *) full="$spec:tokens=0,hidden=$HIDDEN" ;; esac
		"$bin" --backend sim --sim-data=false --op alltoallv -p 64 --topology servers=8,per-server=8 \
			--link-bw "$LINKS" --algo "$algo" --traffic "$full" -b 1M -e 1M -n "$ITERS" -w "$WARMUP" \
			--csv "$work/row.csv" >/dev/null
		awk -F, -v spec="$spec" -v algo="$algo" -v bw="$intra + $inter" -v intra="$intra" -v inter="$inter" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{
				recv = $col["recv_max_bytes"]
				allow = recv / ((intra + inter) * 1e3)
				printf "| %s | %s | %.1f | %.2f | %.2f | %.2f | %d | %.1f | %.1f |\n", spec, algo,
					$col["time_us"], $col["algbw_GBps"], $col["busbw_GBps"], $col["imbalance"],
					$col["hot_rank"], recv / 1048576, allow
				if ($col["time_us"] + 0 < allow) { printf "row %s %s: %.1f us, under what its ports allow (%.1f us)\n", spec, algo, $col["time_us"], allow > "/dev/stderr"; bad = 1 }
			}
			END { exit bad }' "$work/row.csv" || fail=1
	done
done
exit "$fail"
