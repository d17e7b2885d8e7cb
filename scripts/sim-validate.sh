#!/usr/bin/env bash
# Checks the simulated backend against this machine: for each backend
# (shm, tcp) and rank count, it fits the sim's constants to the machine
# (alpha from the cost model that --algo auto calibrates; the bandwidth from
# a measured ring allgather and the reduction rate from a measured ring
# reducescatter, both of FITBYTES), then runs every algorithm of allreduce, allgather and reducescatter forced
# with --algo, measured and simulated with those constants, and prints the
# simulated time over the measured one per algorithm and size. The target
# is within 25% (0.80 to 1.25) from 1 MiB up.
#
#   scripts/sim-validate.sh
#   BACKENDS=shm RANKS="2 4" OPS=allreduce scripts/sim-validate.sh
#
# Env knobs:
#   BACKENDS  measured backends (default "shm tcp")
#   RANKS     rank counts (default "2 4 8")
#   OPS       collectives (default "allreduce allgather reducescatter")
#   MINBYTES, MAXBYTES, STEPFACTOR  the sizes (default 1M, 64M, 4)
#   ITERS, WARMUP  per row (default 10, 2)
#   FITBYTES  size of the two fitting runs (default 16M)
#   HCCL_TEST an existing binary instead of building one
#   KEEP=1    keep the scratch directory
set -euo pipefail

BACKENDS=${BACKENDS:-"shm tcp"}
RANKS=${RANKS:-"2 4 8"}
OPS=${OPS:-"allreduce allgather reducescatter"}
MINBYTES=${MINBYTES:-1M}
MAXBYTES=${MAXBYTES:-64M}
STEPFACTOR=${STEPFACTOR:-4}
FITBYTES=${FITBYTES:-16M}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-2}

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# times ARGS...: "size time_us" per row of one sweep (CSV read by header).
times() {
	"$bin" "$@" -b "$MINBYTES" -e "$MAXBYTES" -f "$STEPFACTOR" -n "$ITERS" -w "$WARMUP" -c 0 \
		--csv - 2>"$work/last.err" |
		python3 -c 'import csv,sys
for r in csv.DictReader(sys.stdin): print(r["size_bytes"], r["time_us"])' ||
		echo "failed: $bin $* ($(tail -1 "$work/last.err"))" >&2
}

printf '%-4s %5s %-14s %-9s %10s %12s %12s %8s\n' back ranks op algo "size(B)" "measured(us)" "sim(us)" sim/meas
total=0
inside=0
for backend in $BACKENDS; do
	for n in $RANKS; do
		# The machine's constants for this backend and rank count: alpha from
		# the calibrated cost model; the link's bandwidth from a measured
		# ring allgather of FITBYTES (n-1 steps of a block each, nothing
		# reduced) and the reduction rate from a measured ring reducescatter
		# of FITBYTES (the same steps, each block also reduced).
		model=$("$bin" --backend "$backend" -p "$n" -b 1M -e 1M -n 2 -w 1 -c 0 --link-bw 1GB/s 2>/dev/null | grep '^# model')
		alpha=$(sed -E 's/.*alpha ([0-9.]+) us.*/\1/' <<<"$model")
		fit() {
			"$bin" --backend "$backend" --link-bw 1GB/s -p "$n" --op "$1" --algo ring -b "$FITBYTES" -e "$FITBYTES" \
				-n "$ITERS" -w "$WARMUP" -c 0 --csv - 2>/dev/null |
				python3 -c 'import csv,sys
for r in csv.DictReader(sys.stdin): print(r["time_us"])'
		}
		ag=$(fit allgather)
		rs=$(fit reducescatter)
		read -r beta gamma < <(awk -v n="$n" -v a="$alpha" -v ag="$ag" -v rs="$rs" -v size="$(numfmt --from=iec "$FITBYTES")" 'BEGIN {
			blk = size / n / 1e3                     # kB per step, so kB/us = GB/s
			bw = blk / (ag / (n - 1) - a)
			red = blk / (rs / (n - 1) - a - blk / bw)
			if (bw <= 0) bw = 1e3; if (red <= 0) red = 1e3
			printf "%.3f %.3f\n", bw, red }')
		echo "[$(date +%H:%M:%S)] $backend -p $n: alpha ${alpha}us (model), bandwidth ${beta}GB/s (ring allgather), reduce ${gamma}GB/s (ring reducescatter)" >&2
		for op in $OPS; do
			algos=$("$bin" algorithms | awk -v op="$op" '$1 == op { $1 = ""; print }')
			for algo in $algos; do
				common=(-p "$n" --op "$op" --algo "$algo")
				paste -d' ' <(times --backend "$backend" --link-bw 1GB/s "${common[@]}") \
					<(times --backend sim --sim-alpha "${alpha}us" --sim-reduce "${gamma}GB/s" \
						--link-bw "${beta}GB/s" "${common[@]}") >"$work/pair"
				while read -r size meas _ sim; do
					ratio=$(awk -v s="$sim" -v m="$meas" 'BEGIN { printf "%.2f", s / m }')
					mark=""
					total=$((total + 1))
					if awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8 && r <= 1.25) }'; then
						inside=$((inside + 1))
					else
						mark="  outside 25%"
					fi
					printf '%-4s %5d %-14s %-9s %10d %12.1f %12.1f %8s%s\n' "$backend" "$n" "$op" "$algo" "$size" "$meas" "$sim" "$ratio" "$mark"
				done <"$work/pair"
			done
		done
	done
done
echo
echo "$inside of $total rows within 25% (sim constants fitted per backend and rank count: alpha from the cost model, bandwidth and reduction rate from ring allgather and reducescatter of $FITBYTES)"
