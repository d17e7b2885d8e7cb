#!/usr/bin/env bash
# Sweeps every algorithm of every collective, forced with --algo, and
# --algo auto, side by side in one run per op, on the shm and tcp backends,
# then prints per op, backend, rank count and size: the fastest forced
# algorithm and its time, what auto chose and its time, auto's time over
# the best one's ("auto/best"), and the time of the algorithm auto chose,
# forced, over the best one's ("choice/best": how good the choice is, from
# the forced rows alone). The best is chosen on the odd-numbered
# repetitions; times are the medians of the even-numbered ones, and the two
# ratios the medians of their ratios within each even-numbered run (see
# below). The target is auto/best <= 1.15; rows above it are marked.
#
#   scripts/algo-sweep.sh
#   BACKENDS=shm RANKS=8 OPS=allreduce REPS=3 scripts/algo-sweep.sh
#
# Env knobs:
#   BACKENDS  backends to sweep (default "shm tcp")
#   RANKS     rank counts (default "2 8")
#   OPS       collectives (default: every one hccl-test lists)
#   MINBYTES, MAXBYTES, STEPFACTOR  the sizes (default 1K, 64M, 8)
#   ITERS, WARMUP  timed and warm-up iterations per row from SPLIT up
#             (default 10, 2)
#   SMALL_ITERS, SMALL_WARMUP  the same below SPLIT (default 200, 20): a
#             row of ten 1 KiB calls lasts under a millisecond, which one
#             scheduler tick of another process on the machine doubles
#   SPLIT     the size from which ITERS applies (default 1M)
#   REPS      repetitions of each run, at least 2 (default 6): the odd ones
#             choose the best forced algorithm, the even ones time it and
#             auto (medians)
#   DTYPE     data type (default fp32)
#   HCCL_TEST an existing binary instead of building one
#   KEEP=1    keep the scratch directory with every CSV
#   REUSE     a scratch directory kept by an earlier run: its measurements
#             are tabled again, nothing is measured
#
# auto and every forced algorithm of an op run in one process (--algo
# auto,ring,...), which measures each size with each of them in turn,
# milliseconds apart: on a shared machine, runs minutes or even seconds
# apart differ by more than the algorithms do. Progress goes to stderr, the
# table to stdout.
set -euo pipefail

BACKENDS=${BACKENDS:-"shm tcp"}
RANKS=${RANKS:-"2 8"}
MINBYTES=${MINBYTES:-1K}
MAXBYTES=${MAXBYTES:-64M}
STEPFACTOR=${STEPFACTOR:-8}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-2}
SMALL_ITERS=${SMALL_ITERS:-200}
SMALL_WARMUP=${SMALL_WARMUP:-20}
SPLIT=${SPLIT:-1M}
REPS=${REPS:-6}
[ "$REPS" -ge 2 ] || { echo "REPS=$REPS: want at least 2" >&2; exit 2; }
DTYPE=${DTYPE:-fp32}

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
OPS=${OPS:-$("$bin" algorithms | awk '{print $1}' | tr '\n' ' ')}

# bytes SIZE: SIZE (a number with an optional K, M or G) in bytes.
bytes() {
	local v=$1 m=1
	case $v in
	*K) m=1024 ;;
	*M) m=$((1 << 20)) ;;
	*G) m=$((1 << 30)) ;;
	esac
	v=${v%[KMG]}
	[[ $v =~ ^[0-9]+$ ]] || { echo "size '$1': want a number of bytes, K, M or G" >&2; exit 2; }
	echo $((v * m))
}
[[ $STEPFACTOR =~ ^[0-9]+$ && $STEPFACTOR -ge 2 ]] || { echo "STEPFACTOR=$STEPFACTOR: want an integer of at least 2" >&2; exit 2; }

# The sizes, split at SPLIT into two sweeps: "MIN MAX ITERS WARMUP" each.
ranges=()
lo=$(bytes "$MINBYTES") hi=$(bytes "$MAXBYTES") split=$(bytes "$SPLIT")
small_hi=0 big_lo=0
for ((s = lo; s <= hi; s *= STEPFACTOR)); do
	if ((s < split)); then small_hi=$s; elif ((big_lo == 0)); then big_lo=$s; fi
done
((small_hi > 0)) && ranges+=("$lo $small_hi $SMALL_ITERS $SMALL_WARMUP")
((big_lo > 0)) && ranges+=("$big_lo $hi $ITERS $WARMUP")

# run OUT ARGS...: one sweep as CSV per range of sizes, appended to OUT
# without its header.
run() {
	local out=$1
	shift
	local csv range b e n w
	for range in "${ranges[@]}"; do
		read -r b e n w <<<"$range"
		if ! csv=$("$bin" "$@" -b "$b" -e "$e" -f "$STEPFACTOR" -n "$n" -w "$w" \
			-d "$DTYPE" -c 0 --link-bw 1GB/s --csv - 2>"$work/last.err"); then
			echo "failed: $bin $* -b $b -e $e ($(tail -1 "$work/last.err"))" >&2
			continue
		fi
		if [ ! -s "$out" ]; then printf '%s\n' "$csv" | head -1 >"$out"; fi
		printf '%s\n' "$csv" | tail -n +2 >>"$out"
	done
}

all=$work/all.csv
if [ -n "${REUSE:-}" ]; then
	cp "$REUSE/keep.csv" "$all"
	REPS=0
fi
for rep in $(seq "$REPS"); do
	for backend in $BACKENDS; do
		for n in $RANKS; do
			for op in $OPS; do
				# shellcheck disable=SC2207
				algos=(auto $("$bin" algorithms | awk -v op="$op" '$1 == op { $1 = ""; print }'))
				# Rotated from one pair of repetitions to the next, so that
				# no algorithm is always first at a size.
				rot=$((rep / 2 % ${#algos[@]}))
				list=$(IFS=,; echo "${algos[*]:rot},${algos[*]:0:rot}")
				list=${list%,}
				echo "[$(date +%H:%M:%S)] rep $rep $backend -p $n $op --algo $list" >&2
				run "$all" --backend "$backend" -p "$n" --op "$op" --algo "$list"
			done
		done
	done
done

# Columns by name, then: per (op, backend, ranks, size, requested algo) the
# times of the repetitions in order; then per (op, backend, ranks, size) the
# best forced algorithm against auto. The best is chosen by the median of
# the odd-numbered repetitions and timed, as auto is, by the median of the
# even-numbered ones: picking the fastest of several algorithms that take
# the same time (at 2 ranks many make the very same exchange) by the same
# figures it is then timed by would favour whichever the noise favoured,
# and make every auto look slower than the best.
awk -F, "$AWK_MEDIAN"'
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	key = $col["op"] SUBSEP $col["backend"] SUBSEP $col["ranks"] SUBSEP $col["size_bytes"]
	req = $col["algo_requested"]
	k = key SUBSEP req
	nrep[k]++
	if (nrep[k] % 2) pick[k] = pick[k] " " ($col["time_us"] + 0)
	else times[k] = times[k] " " ($col["time_us"] + 0)
	if (req == "auto") ran[k] = $col["algo"]
	keys[key] = 1; reqs[k] = 1
}
# paired(x, y): the median over the repetitions of x over y, each pair
# measured side by side in one run; the ratio of the medians if a run is
# missing.
function paired(x, y,   a, b, n, i, l) {
	n = split(x, a, " ")
	if (split(y, b, " ") != n) return median(x) / median(y)
	for (i = 1; i <= n; i++) l = l " " (b[i] > 0 ? a[i] / b[i] : 0)
	return median(l)
}
function before(a, b,   x, y) {
	split(a, x, SUBSEP); split(b, y, SUBSEP)
	if (x[1] != y[1]) return x[1] < y[1]
	if (x[2] != y[2]) return x[2] < y[2]
	if (x[3] != y[3]) return x[3] + 0 < y[3] + 0
	return x[4] + 0 < y[4] + 0
}
END {
	printf "%-14s %-4s %5s %10s  %-9s %10s  %-9s %10s  %9s  %11s\n", "op", "back", "ranks", "size(B)", "best", "best(us)", "auto", "auto(us)", "auto/best", "choice/best"
	n = 0
	for (key in keys) order[++n] = key
	for (i = 2; i <= n; i++) { v = order[i]; j = i - 1
		while (j > 0 && before(v, order[j])) { order[j + 1] = order[j]; j-- }
		order[j + 1] = v }
	worst = 0; over = 0; worstc = 0; rows = 0
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, f, SUBSEP)
		bt = -1; bn = ""
		for (rk in reqs) {
			split(rk, g, SUBSEP)
			if (g[1] SUBSEP g[2] SUBSEP g[3] SUBSEP g[4] != key || g[5] == "auto") continue
			m = median(pick[rk])
			if (bt < 0 || m < bt) { bt = m; bn = g[5] }
		}
		ak = key SUBSEP "auto"
		if (!(ak in times) || !(key SUBSEP bn in times)) continue
		bt = median(times[key SUBSEP bn])
		if (bt <= 0) continue
		at = median(times[ak])
		r = paired(times[ak], times[key SUBSEP bn])
		ck = key SUBSEP ran[ak]
		c = (ck in times) ? paired(times[ck], times[key SUBSEP bn]) : 0
		mark = r > 1.15 ? "  > 1.15" : ""
		if (r > 1.15) over++
		if (r > worst) worst = r
		if (c > worstc) worstc = c
		rows++
		printf "%-14s %-4s %5d %10d  %-9s %10.1f  %-9s %10.1f  %9.2f  %11.2f%s\n", f[1], f[2], f[3], f[4], bn, bt, ran[ak], at, r, c, mark
	}
	printf "\n%d rows; worst auto/best %.2f, %d rows above 1.15; worst choice/best %.2f\n", rows, worst, over, worstc
}' "$all"
if [ "$KEEP" = 1 ]; then cp "$all" "$work/keep.csv"; fi
