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
#   SETTLE    seconds to wait before each measured run (default 1): a run
#             right after one that used gigabytes finds the machine slow
#             for its first rows
#   HCCL_TEST an existing binary instead of building one
#   KEEP=1    keep the scratch directory
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

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# times ARGS...: "size time_us" per size of a sweep run RUNS times, each
# time the median of the runs' rows (CSV read by header).
times() {
	"$bin" "$@" -n "$ITERS" -w "$WARMUP" -c 0 --runs "$RUNS" --csv - 2>"$work/last.err" |
		python3 -c 'import csv, statistics, sys
rows = {}
for r in csv.DictReader(sys.stdin): rows.setdefault(int(r["size_bytes"]), []).append(float(r["time_us"]))
for size in sorted(rows): print(size, statistics.median(rows[size]))' ||
		echo "failed: $bin $* ($(tail -1 "$work/last.err"))" >&2
}
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
# copy goes at the link's speed; with it, at COPY GB/s per size (a file of
# "size rate" lines).
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
# alike; $work/m.BACKEND.N.OP.ALGO gets each size's median.
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
    s, t = l.split(); rows.setdefault(int(s), []).append(float(t))
for s in sorted(rows): print(s, statistics.median(rows[s]))' "$work/r.$1.$2.$pair" >"$work/m.$1.$2.$pair"
	done
}

# algos OP: the algorithms of OP.
algos() { "$bin" algorithms | awk -v op="$1" '$1 == op { $1 = ""; print }'; }

declare -A shmlink # rank count -> file of "size link" of shm, the copy rate
printf '%-4s %5s %-14s %-9s %10s %12s %12s %8s %12s %8s\n' back ranks op algo "size(B)" \
	"measured(us)" "sim1(us)" sim1/meas "simS(us)" simS/meas
total=0 inside1=0 insideS=0
for backend in $BACKENDS; do
	for n in $RANKS; do
		a=$(alpha "$backend" "$n")
		measure "$backend" "$n"
		m=$work/m.$backend.$n
		if [ "$backend" = shm ]; then
			fit "$n" "$a" "$m.allgather.ring" "$m.reducescatter.ring" >"$work/fit"
			grep -v '^all' "$work/fit" | cut -d' ' -f1,2 >"$work/shmlink.$n"
			shmlink[$n]=$work/shmlink.$n
		else
			if [ -z "${shmlink[$n]:-}" ]; then # shm not measured: its copies only
				sa=$(alpha shm "$n")
				OPS='' measure shm "$n"
				fit "$n" "$sa" "$work/m.shm.$n.allgather.ring" "$work/m.shm.$n.reducescatter.ring" |
					grep -v '^all' | cut -d' ' -f1,2 >"$work/shmlink.$n"
				shmlink[$n]=$work/shmlink.$n
			fi
			fit "$n" "$a" "$m.allgather.ring" "$m.reducescatter.ring" "${shmlink[$n]}" >"$work/fit"
		fi
		read -r _ link red < <(grep '^all' "$work/fit")
		copy=$(cut -d' ' -f2 "${shmlink[$n]}" | python3 -c 'import statistics, sys; print("%.3f" % statistics.median(float(l) for l in sys.stdin))')
		echo "[$(date +%H:%M:%S)] $backend -p $n: alpha ${a}us, link ${link}GB/s, reduce ${red}GB/s, copy ${copy}GB/s (per size: $(grep -v '^all' "$work/fit" | tr '\n' ';'))" >&2
		for op in $OPS; do
			for algo in $(algos "$op"); do
				simulate "$n" "$op" "$algo" "$a" "$link" "$red" "$copy" "${sweep[@]}" >"$work/sim1"
				: >"$work/simS"
				while read -r size slink sred; do
					scopy=$(awk -v s="$size" '$1 == s { print $2 }' "${shmlink[$n]}")
					simulate "$n" "$op" "$algo" "$a" "$slink" "$sred" "$scopy" -b "$size" -e "$size" </dev/null >>"$work/simS"
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
				done < <(paste -d' ' "$m.$op.$algo" "$work/sim1" "$work/simS")
			done
		done
	done
done
echo
echo "within 25%: $inside1 of $total rows with one set of constants per backend and rank count (sim1), $insideS of $total with constants fitted per size (simS); measured times are medians of $RUNS runs"
