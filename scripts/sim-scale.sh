#!/usr/bin/env bash
# Predicts allreduce at scale with the simulated backend, without payload:
# busbw of ring, rhd (halving-doubling), dbtree (double binary tree) and
# hier (two-level) at 8, 64, 256 and 1024 ranks, 8 per server, on HCCS
# inside a server and RoCE between servers (the presets' figures and the
# sim's default latencies), the crossover sizes between them, and what
# --algo auto chooses.
#
#   scripts/sim-scale.sh
#   RANKS="8 64" ALGOS="ring hier" LINKS=intra=hccs,inter=roce scripts/sim-scale.sh
#
# With COST=1 it measures the simulator itself instead: for each of OPS
# and each of ALGOS (default "auto ring") at each rank count (default
# "1024 4096 16384"), one sweep of 11 sizes, 1 KiB to 1 GiB by 4, without
# payload, run under /usr/bin/time: exit status, wall and CPU seconds and
# peak resident memory, one line each. Each sweep is cut off after LIMIT
# seconds (default 600).
#
#   COST=1 OPS="allreduce alltoall" RANKS="1024 16384" scripts/sim-scale.sh
#
# Env knobs: RANKS (default "8 64 256 1024"), PER_SERVER (8), ALGOS
# (default "ring rhd dbtree hier"), LINKS (--link-bw, default
# intra=hccs,inter=roce), MINBYTES, MAXBYTES, STEPFACTOR (1K, 1G, 4),
# COST, OPS (default "allreduce allgather reducescatter alltoall
# broadcast sendrecv"), LIMIT, HCCL_TEST, KEEP=1.
set -euo pipefail

if [ "${COST:-0}" = 1 ]; then
	RANKS=${RANKS:-"1024 4096 16384"}
	ALGOS=${ALGOS:-"auto ring"}
	OPS=${OPS:-"allreduce allgather reducescatter alltoall broadcast sendrecv"}
	LIMIT=${LIMIT:-600}
	# shellcheck source=common.sh
	source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
	printf "%-14s %-6s %6s %5s %9s %9s %9s\n" op algo ranks exit wall_s cpu_s rss_MB
	for op in $OPS; do
		for algo in $ALGOS; do
			for n in $RANKS; do
				set +e
				/usr/bin/time -f "%e %U %S %M" -o "$work/time" timeout "$LIMIT" \
					"$bin" --backend sim --sim-data=false -p "$n" --topology "per-server=${PER_SERVER:-8}" \
					--op "$op" --algo "$algo" -b "${MINBYTES:-1K}" -e "${MAXBYTES:-1G}" -f "${STEPFACTOR:-4}" \
					-n 2 -w 1 >/dev/null 2>"$work/err"
				code=$?
				set -e
				read -r wall user sys rss < <(tail -1 "$work/time")
				printf "%-14s %-6s %6d %5d %9.1f %9.1f %9.0f\n" "$op" "$algo" "$n" "$code" "$wall" \
					"$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
				[ "$code" = 0 ] || echo "    $(grep -v '^Command' "$work/err" | tail -1)" >&2
			done
		done
	done
	exit 0
fi

RANKS=${RANKS:-"8 64 256 1024"}
PER_SERVER=${PER_SERVER:-8}
ALGOS=${ALGOS:-"ring rhd dbtree hier"}
LINKS=${LINKS:-intra=hccs,inter=roce}
MINBYTES=${MINBYTES:-1K}
MAXBYTES=${MAXBYTES:-1G}
STEPFACTOR=${STEPFACTOR:-4}

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

all=$work/all.csv
for n in $RANKS; do
	for algo in $ALGOS auto; do
		echo "[$(date +%H:%M:%S)] -p $n $algo" >&2
		# One server has no link between servers: its ranks get the intra link only.
		place=(--topology "per-server=$PER_SERVER" --link-bw "$LINKS")
		if [ "$n" -le "$PER_SERVER" ]; then
			intra=${LINKS#*intra=}
			place=(--link-bw "${intra%%,*}")
		fi
		"$bin" --backend sim --sim-data=false -p "$n" "${place[@]}" \
			--algo "$algo" -b "$MINBYTES" -e "$MAXBYTES" -f "$STEPFACTOR" -n 2 -w 1 --csv - 2>"$work/last.err" |
			python3 -c 'import csv,sys
for r in csv.DictReader(sys.stdin): print(r["ranks"], r["algo_requested"], r["algo"], r["size_bytes"], r["busbw_GBps"])' >>"$all" ||
			echo "failed: -p $n --algo $algo ($(tail -1 "$work/last.err"))" >&2
	done
done

python3 - "$all" "$ALGOS" <<'PY'
import sys, collections
rows = [l.split() for l in open(sys.argv[1])]
algos = sys.argv[2].split()
bw = collections.defaultdict(dict)      # (ranks, size) -> algo -> busbw
chose = {}
for n, req, ran, size, b in rows:
    key = (int(n), int(size))
    if req == "auto":
        chose[key] = (ran, float(b))
    else:
        bw[key][req] = float(b)
def human(s):
    for u in ["B", "KiB", "MiB", "GiB"]:
        if s < 1024: return f"{s:g}{u}"
        s /= 1024
    return f"{s:g}TiB"
print("allreduce busbw (GB/s), simulated: %s, 8 ranks per server" % "HCCS inside, RoCE between")
print("%6s %9s " % ("ranks", "size") + " ".join("%8s" % a for a in algos) + "   best      auto (GB/s)")
for key in sorted(bw):
    n, size = key
    best = max(bw[key], key=bw[key].get)
    a, ab = chose.get(key, ("-", 0))
    flag = "" if a == best or ab >= 0.95 * bw[key][best] else "  <- auto below 95% of best"
    print("%6d %9s " % (n, human(size)) + " ".join("%8.2f" % bw[key].get(x, float("nan")) for x in algos) +
          "   %-8s  %-6s %6.2f%s" % (best, a, ab, flag))
print()
for n in sorted({k[0] for k in bw}):
    seq = [(s, max(bw[(n, s)], key=bw[(n, s)].get)) for (m, s) in sorted(bw) if m == n]
    cross = [f"{prev[1]}->{cur[1]} at {human(cur[0])}" for prev, cur in zip(seq, seq[1:]) if prev[1] != cur[1]]
    print("%5d ranks: fastest %s; crossovers: %s" % (n, seq[0][1], ", ".join(cross) or "none"))
PY
