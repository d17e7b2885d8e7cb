#!/usr/bin/env bash
# Checks the simulated backend against this machine. For each backend (shm,
# tcp) and rank count it fits the sim's constants to the machine, then runs
# every algorithm of allreduce, allgather and reducescatter forced with
# --algo, measured and then simulated, and prints the simulated time over
# the measured one per algorithm and size. The target is within 25% (0.80
# to 1.25) from 1 MiB up.
#
# The constants, per backend and rank count:
#   alpha   the cost model's calibrated alpha (the median of 3 calibrations);
#   copy    the rate of a copy between a rank's own buffers: on shm a
#           message is such a copy, so it is shm's link bandwidth at the
#           same rank count (below), for tcp too;
#   link    from a measured ring allgather: n-1 steps of a block of
#           size/n each, after copying its own block into place;
#   reduce  from a measured ring reducescatter: the same steps, each block
#           also reduced.
# shm is simulated with --sim-pull: its receivers copy and reduce out of
# the sender's buffer with their own CPU, in one pass, one message after
# another; tcp's with the sender's port moving each message, as a network
# adapter does, and the receiver reducing it after.
# Two fits are compared: one set of constants for all sizes (the median of
# the sizes' estimates), and one per size (a 1 MiB message runs in cache
# here, a 64 MiB one from memory, and the sim's links have one speed).
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
#   RUNS      rounds of measured runs, of which each row takes the median (default 5)
#   STAT      the measured figure the table shows: a row's mean time over
#             its iterations (mean, the default, as the sweep reports it),
#             its median iteration (p50) or its fastest (min); the summary
#             counts all three
#   SETTLE    seconds to wait before each measured run (default 1): a run
#             right after one that used gigabytes finds the machine slow
#             for its first rows
#   HCCL_TEST an existing binary instead of building one
#   KEEP=1    keep the scratch directory
#   REUSE     a scratch directory kept by an earlier run: its measurements
#             are compared again (with this build's sim), nothing is measured
#   AGAINST   another kept scratch directory: also count how many of this
#             run's measured rows lie within 25% of the same rows measured
#             there, the machine's own reproducibility by the same yardstick
set -euo pipefail

BACKENDS=${BACKENDS:-"shm tcp"}
RANKS=${RANKS:-"2 4 8"}
OPS=${OPS:-"allreduce allgather reducescatter"}
MINBYTES=${MINBYTES:-1M}
MAXBYTES=${MAXBYTES:-64M}
STEPFACTOR=${STEPFACTOR:-4}
ITERS=${ITERS:-10}
RUNS=${RUNS:-5}
SETTLE=${SETTLE:-1}
WARMUP=${WARMUP:-2}
STAT=${STAT:-mean}
REUSE=${REUSE:-}

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# times ARGS...: "size mean p50 min" per size of a sweep run RUNS times:
# for each of the row's mean time, its median iteration and its fastest
# iteration (us), the median over the runs (CSV read by header).
times() {
	"$bin" "$@" -n "$ITERS" -w "$WARMUP" -c 0 --runs "$RUNS" --csv - 2>"$work/last.err" |
		python3 -c 'import csv, statistics, sys
rows = {}
for r in csv.DictReader(sys.stdin):
    rows.setdefault(int(r["size_bytes"]), []).append([float(r[c]) for c in ("time_us", "p50_us", "min_us")])
for size in sorted(rows):
    print(size, *(statistics.median(v) for v in zip(*rows[size])))' ||
		echo "failed: $bin $* ($(tail -1 "$work/last.err"))" >&2
}
# column FILE K: "size value" lines of column K (2 mean, 3 p50, 4 min) of
# a file of times' lines.
column() { awk -v k="$2" '{ print $1, $k }' "$1"; }
sweep=(-b "$MINBYTES" -e "$MAXBYTES" -f "$STEPFACTOR")

# alpha BACKEND N: the median alpha of 3 calibrations of the cost model.
alpha() {
	for _ in 1 2 3; do
		"$bin" --backend "$1" -p "$2" -b 1M -e 1M -n 2 -w 1 -c 0 --link-bw 1GB/s 2>/dev/null |
			sed -nE 's/^# model alpha ([0-9.]+) us.*/\1/p'
	done | sort -g | sed -n 2p
}

# fit N ALPHA AG RS [COPY]: per size, "size link reduce" in GB/s from the
# files of measured ring allgather (AG) and reducescatter (RS) times, and
# a last line "all link reduce" with the medians. Without COPY (shm) a
# copy goes at the link's speed, and a receiver moves and reduces each
# block in one pass (the sim's --sim-pull): a reducescatter step takes the
# slower of the block at the link's rate and at the reduction's; with it
# (tcp), a copy goes at COPY GB/s per size (a file of "size rate" lines),
# and a step moves the block, then reduces it.
fit() {
	python3 - "$@" <<-'PY'
		import statistics, sys
		n, alpha = int(sys.argv[1]), float(sys.argv[2])
		def load(path): return {int(s): float(t) for s, t in (l.split() for l in open(path))}
		ag, rs = load(sys.argv[3]), load(sys.argv[4])
		copy = load(sys.argv[5]) if len(sys.argv) > 5 else None
		links, reds = [], []
		for size in sorted(ag.keys() & rs.keys()):
		    blk = size / n / 1e3  # kB, so kB/us = GB/s
		    if copy is None:  # n blocks at the link's speed: n-1 sent, one copied
		        link = n * blk / max(ag[size] - (n - 1) * alpha, 1e-9)
		    else:
		        link = (n - 1) * blk / max(ag[size] - (n - 1) * alpha - blk / copy[size], 1e-9)
		    if copy is None:  # one pass: the step's time is the reduction's, if slower
		        red = (n - 1) * blk / max(rs[size] - (n - 1) * alpha, 1e-9)
		    else:
		        red = (n - 1) * blk / max(rs[size] - (n - 1) * (alpha + blk / link), 1e-9)
		    red = min(red, 1e3)  # reducing costs nothing measurable
		    links.append(link)
		    reds.append(red)
		    print(size, "%.3f %.3f" % (link, red))
		print("all", "%.3f %.3f" % (statistics.median(links), statistics.median(reds)))
	PY
}

# simulate N OP ALGO ALPHA LINK REDUCE COPY ARGS...: the simulated times.
simulate() {
	RUNS=1 times --backend sim --sim-data=false -p "$1" --op "$2" --algo "$3" \
		--sim-alpha "$4us" --link-bw "$5GB/s" --sim-reduce "$6GB/s" --sim-copy "$7GB/s" "${@:8}"
}

# measure BACKEND N: every algorithm of every op of OPS, and ring
# allgather and reducescatter (they fit the links), RUNS rounds of one run
# each, so that the machine's slow and fast moments fall on all of them
# alike; $work/m.BACKEND.N.OP.ALGO gets each size's medians (as times).
measure() {
	local pairs=() pair op algo
	for op in $OPS; do
		for algo in $(algos "$op"); do pairs+=("$op.$algo"); done
	done
	for pair in allgather.ring reducescatter.ring; do
		case " ${pairs[*]} " in *" $pair "*) ;; *) pairs+=("$pair") ;; esac
	done
	for _ in $(seq "$RUNS"); do
		for pair in "${pairs[@]}"; do
			sleep "$SETTLE"
			RUNS=1 times --backend "$1" --link-bw 1GB/s -p "$2" --op "${pair%.*}" --algo "${pair#*.}" "${sweep[@]}" \
				>>"$work/r.$1.$2.$pair"
		done
	done
	for pair in "${pairs[@]}"; do
		python3 -c 'import statistics, sys
rows = {}
for l in open(sys.argv[1]):
    s, *t = l.split(); rows.setdefault(int(s), []).append([float(x) for x in t])
for s in sorted(rows): print(s, *(statistics.median(v) for v in zip(*rows[s])))' "$work/r.$1.$2.$pair" >"$work/m.$1.$2.$pair"
	done
}

# algos OP: the algorithms of OP.
algos() { "$bin" algorithms | awk -v op="$1" '$1 == op { $1 = ""; print }'; }

declare -A alphas # "backend n" -> alpha (us), also kept in $work/alphas
if [ -n "$REUSE" ]; then
	cp "$REUSE"/m.* "$REUSE/alphas" "$work/"
	while read -r backend n a; do alphas["$backend $n"]=$a; done <"$work/alphas"
else
	for backend in $BACKENDS; do
		for n in $RANKS; do
			alphas["$backend $n"]=$(alpha "$backend" "$n")
			measure "$backend" "$n"
			echo "[$(date +%H:%M:%S)] measured $backend -p $n" >&2
		done
	done
	for n in $RANKS; do # tcp's copies go at shm's link rate
		if [ -z "${alphas["shm $n"]:-}" ]; then
			alphas["shm $n"]=$(alpha shm "$n")
			OPS='' measure shm "$n"
		fi
	done
	for key in "${!alphas[@]}"; do echo "$key ${alphas[$key]}"; done >"$work/alphas"
fi

# evaluate K: fits the constants to column K of the measured times (2 the
# row's mean, 3 its median iteration, 4 its fastest), simulates every
# algorithm with them, and writes the comparison to $work/table.K and
# "rows inside1 insideS" to $work/count.K.
evaluate() {
	local k=$1 backend n a m link red copy op algo fitted size meas sim1 simS r1 rS mark pull
	local total=0 inside1=0 insideS=0
	for n in $RANKS; do # shm's link rate per size: the copy rate
		m=$work/m.shm.$n
		column "$m.allgather.ring" "$k" >"$work/ag"
		column "$m.reducescatter.ring" "$k" >"$work/rs"
		fit "$n" "${alphas["shm $n"]}" "$work/ag" "$work/rs" | grep -v '^all' | cut -d' ' -f1,2 >"$work/shmlink.$k.$n"
	done
	for backend in $BACKENDS; do
		for n in $RANKS; do
			a=${alphas["$backend $n"]}
			m=$work/m.$backend.$n
			column "$m.allgather.ring" "$k" >"$work/ag"
			column "$m.reducescatter.ring" "$k" >"$work/rs"
			pull=()
			if [ "$backend" = shm ]; then
				pull=(--sim-pull) # a receiver copies out of the sender's buffer
				fit "$n" "$a" "$work/ag" "$work/rs" >"$work/fit"
			else
				fit "$n" "$a" "$work/ag" "$work/rs" "$work/shmlink.$k.$n" >"$work/fit"
			fi
			read -r _ link red < <(grep '^all' "$work/fit")
			copy=$(cut -d' ' -f2 "$work/shmlink.$k.$n" | python3 -c 'import statistics, sys; print("%.3f" % statistics.median(float(l) for l in sys.stdin))')
			echo "# $backend -p $n: alpha ${a}us, link ${link}GB/s, reduce ${red}GB/s, copy ${copy}GB/s (per size: $(grep -v '^all' "$work/fit" | tr '\n' ';'))"
			for op in $OPS; do
				for algo in $(algos "$op"); do
					simulate "$n" "$op" "$algo" "$a" "$link" "$red" "$copy" "${sweep[@]}" "${pull[@]}" | column /dev/stdin "$k" >"$work/sim1"
					: >"$work/simS"
					while read -r size slink sred; do
						scopy=$(awk -v s="$size" '$1 == s { print $2 }' "$work/shmlink.$k.$n")
						simulate "$n" "$op" "$algo" "$a" "$slink" "$sred" "$scopy" -b "$size" -e "$size" "${pull[@]}" </dev/null |
							column /dev/stdin "$k" >>"$work/simS"
					done < <(grep -v '^all' "$work/fit")
					fitted=""
					case "$op.$algo" in allgather.ring | reducescatter.ring) fitted="  (fitted)" ;; esac
					while read -r size meas _ sim1 _ simS; do
						r1=$(awk -v s="$sim1" -v m="$meas" 'BEGIN { printf "%.2f", s / m }')
						rS=$(awk -v s="$simS" -v m="$meas" 'BEGIN { printf "%.2f", s / m }')
						total=$((total + 1))
						mark=$fitted
						if awk -v r="$r1" 'BEGIN { exit !(r >= 0.8 && r <= 1.25) }'; then
							inside1=$((inside1 + 1))
						else
							mark="$mark  sim1 outside"
						fi
						if awk -v r="$rS" 'BEGIN { exit !(r >= 0.8 && r <= 1.25) }'; then
							insideS=$((insideS + 1))
						else
							mark="$mark  simS outside"
						fi
						printf '%-4s %5d %-14s %-9s %10d %12.1f %12.1f %8s %12.1f %8s%s\n' "$backend" "$n" "$op" "$algo" \
							"$size" "$meas" "$sim1" "$r1" "$simS" "$rS" "$mark"
					done < <(paste -d' ' <(column "$m.$op.$algo" "$k") "$work/sim1" "$work/simS")
				done
			done
		done
	done >"$work/table.$k"
	echo "$total $inside1 $insideS" >"$work/count.$k"
}

declare -A statcol=([mean]=2 [p50]=3 [min]=4)
k=${statcol[$STAT]:-}
[ -n "$k" ] || { echo "STAT=$STAT: want mean, p50 or min" >&2; exit 2; }
printf '%-4s %5s %-14s %-9s %10s %12s %12s %8s %12s %8s\n' back ranks op algo "size(B)" \
	"measured(us)" "sim1(us)" sim1/meas "simS(us)" simS/meas
for stat in mean p50 min; do evaluate "${statcol[$stat]}"; done
cat "$work/table.$k"
echo
for stat in mean p50 min; do
	read -r total inside1 insideS <"$work/count.${statcol[$stat]}"
	echo "$stat: within 25%: $inside1 of $total rows with one set of constants per backend and rank count (sim1), $insideS of $total with constants fitted per size (simS)"
done
echo "(measured: each row's mean time, median iteration or fastest iteration, each the median of $RUNS runs; the table above is STAT=$STAT)"
if [ -n "${AGAINST:-}" ]; then
	for stat in mean p50 min; do
		col=${statcol[$stat]}
		for f in "$work"/m.*; do
			[ -f "$AGAINST/${f##*/}" ] || continue
			LC_ALL=C join <(LC_ALL=C sort "$f") <(LC_ALL=C sort "$AGAINST/${f##*/}")
		done | awk -v a="$col" -v b="$((col + 3))" -v stat="$stat" -v dir="$AGAINST" '
			$b > 0 { n++; r = $a / $b; if (r >= 0.8 && r <= 1.25) in25++ }
			END { printf "%s: measured again: %d of %d rows within 25%% of the same rows measured in %s\n", stat, in25, n, dir }'
	done
fi
