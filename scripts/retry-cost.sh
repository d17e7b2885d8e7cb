#!/usr/bin/env bash
# Measures what operator re-execution (--retry) costs, as HCCL documents
# for HCCL_OP_RETRY_ENABLE: per op, backend and size, the time with retry
# off, with retry on and no faults, and with retry on while sends fail at
# random (--inject fail=p:P: a dropped connection on tcp, a failed transfer
# on shm), and each one's degradation against retry off, in percent. Every
# result is checked (-c 1); the last columns give the re-runs the faulty
# runs needed and their wrong elements (must be 0).
#
#   scripts/retry-cost.sh
#   BACKENDS=tcp RANKS=4 OPS=allreduce REPS=5 scripts/retry-cost.sh
#
# Env knobs:
#   BACKENDS  backends (default "shm tcp")
#   RANKS     ranks (default 8)
#   OPS       collectives (default "allreduce allgather reducescatter broadcast alltoall")
#   MINBYTES, MAXBYTES, STEPFACTOR  the sizes (default 1K, 16M, 16)
#   ITERS, WARMUP  timed and warm-up iterations per row (default 20, 5)
#   REPS      repetitions; each row keeps its median time (default 3)
#   RETRY     --retry with and without faults (default 5)
#   P         chance that a send fails in the faulty runs (default 0.0005)
#   DTYPE     data type (default fp32)
#   HCCL_TEST an existing binary instead of building one
#   KEEP=1    keep the scratch directory with every CSV
#
# The three runs of an op alternate within each repetition, so slow phases
# of a shared machine hit them alike. Progress goes to stderr, the table to
# stdout.
set -euo pipefail

BACKENDS=${BACKENDS:-"shm tcp"}
RANKS=${RANKS:-8}
OPS=${OPS:-"allreduce allgather reducescatter broadcast alltoall"}
MINBYTES=${MINBYTES:-1K}
MAXBYTES=${MAXBYTES:-16M}
STEPFACTOR=${STEPFACTOR:-16}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
REPS=${REPS:-3}
RETRY=${RETRY:-5}
P=${P:-0.0005}
DTYPE=${DTYPE:-fp32}

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# run MODE OUT ARGS...: one sweep as CSV, appended to OUT without its
# header, with a leading column naming the mode.
run() {
	local mode=$1 out=$2
	shift 2
	local csv
	if ! csv=$("$bin" "$@" -b "$MINBYTES" -e "$MAXBYTES" -f "$STEPFACTOR" -n "$ITERS" -w "$WARMUP" \
		-d "$DTYPE" -c 1 --link-bw 1GB/s --csv - 2>"$work/last.err"); then
		echo "failed: $bin $* ($(tail -1 "$work/last.err"))" >&2
		return 0
	fi
	if [ ! -s "$out" ]; then printf 'mode,%s\n' "$(printf '%s\n' "$csv" | head -1)" >"$out"; fi
	printf '%s\n' "$csv" | tail -n +2 | sed "s/^/$mode,/" >>"$out"
}

all=$work/all.csv
for rep in $(seq "$REPS"); do
	for backend in $BACKENDS; do
		for op in $OPS; do
			echo "[$(date +%H:%M:%S)] rep $rep $backend -p $RANKS $op" >&2
			common=(--backend "$backend" -p "$RANKS" --op "$op")
			run off "$all" "${common[@]}"
			run on "$all" "${common[@]}" --retry "$RETRY"
			run faults "$all" "${common[@]}" --retry "$RETRY" --inject "fail=p:$P" --seed "$rep"
		done
	done
done

awk -F, -v p="$P" "$AWK_MEDIAN"'
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	key = $col["op"] SUBSEP $col["backend"] SUBSEP $col["ranks"] SUBSEP $col["size_bytes"]
	k = key SUBSEP $col["mode"]
	times[k] = times[k] " " ($col["time_us"] + 0)
	keys[key] = 1
	if ($col["mode"] == "faults") { reruns[key] += $col["retries"]; wrong[key] += $col["wrong"] }
}
function before(a, b,   x, y) {
	split(a, x, SUBSEP); split(b, y, SUBSEP)
	if (x[1] != y[1]) return x[1] < y[1]
	if (x[2] != y[2]) return x[2] < y[2]
	return x[4] + 0 < y[4] + 0
}
END {
	printf "%-14s %-4s %5s %10s %11s %11s %8s %11s %8s %7s %6s\n", "op", "back", "ranks", "size(B)", "off(us)", "on(us)", "on", "faults(us)", "faults", "re-runs", "wrong"
	n = 0
	for (key in keys) order[++n] = key
	for (i = 2; i <= n; i++) { v = order[i]; j = i - 1
		while (j > 0 && before(v, order[j])) { order[j + 1] = order[j]; j-- }
		order[j + 1] = v }
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, f, SUBSEP)
		if (!((key SUBSEP "off") in times)) continue
		off = median(times[key SUBSEP "off"])
		on = (key SUBSEP "on") in times ? median(times[key SUBSEP "on"]) : -1
		ft = (key SUBSEP "faults") in times ? median(times[key SUBSEP "faults"]) : -1
		printf "%-14s %-4s %5d %10d %11.1f %11.1f %+7.1f%% %11.1f %+7.1f%% %7d %6d\n", f[1], f[2], f[3], f[4], off, on, 100 * (on / off - 1), ft, 100 * (ft / off - 1), reruns[key], wrong[key]
	}
	printf "\non: --retry with no fault; faults: --retry with each send failing with chance %s; %% = time over retry off, minus 1; medians of the repetitions\n", p
}' "$all"
if [ "$KEEP" = 1 ]; then cp "$all" "$work/keep.csv"; fi
