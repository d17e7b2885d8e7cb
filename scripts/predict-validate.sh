#!/usr/bin/env bash
# Checks fit and predict against this machine: measures each collective on
# a backend at the fitted rank counts and at the predicted one, fits a
# model on the fitted runs only, predicts the larger world, and prints per
# collective the median and worst absolute percentage error of the
# predicted busbw against the measured one at the validated sizes, and how
# many measured rows fell inside the prediction's band.
#
#   scripts/predict-validate.sh
#   BACKEND=proc FIT="2 4" PREDICT=8 scripts/predict-validate.sh
#
# Env knobs:
#   BACKEND   shm or proc (default shm)
#   FIT       rank counts the model is fitted on (default "2 4")
#   PREDICT   the rank count predicted and measured (default 8)
#   OPS       collectives (default "allreduce allgather reducescatter alltoall sendrecv")
#   ALGOS     the algorithm each collective runs with, as op=algo words
#             (default: allreduce=twoshot allgather=rd reducescatter=direct
#             alltoall=direct sendrecv=ring, what auto takes for each at 4
#             ranks and more here; at 2 ranks it took oneshot, rhd or
#             twoshot for allreduce from one round to the next, which cost
#             the same in the model and not on the machine); an op not
#             named runs with auto
#   MINBYTES, MAXBYTES  the measured sizes, by a factor of 2 (default 8M, 128M)
#   FITMIN    fit's --min-size (default: the smallest power of two whose
#             buffers on the fewest fitted ranks, a send and a receive
#             buffer each, fill four times the last-level cache, so that no
#             fitted row runs from it: 32M with 2 ranks and 32 MiB of L3;
#             32M where getconf knows no L3)
#   VALMIN    the smallest size validated (default 32M)
#   ITERS, WARMUP  per row (default 5, 2)
#   RUNS      sweeps of each world, in rounds of one sweep of every world
#             (each meets the same other loads); of each row's repetitions
#             fit takes the fastest, and the measured busbw is the best of
#             them too: other loads only ever slow a run down (default 5)
#   STAT      the time of a row fitted and compared: mean (the sweep's
#             time), p50 or min (default p50: on a loaded machine the
#             mean carries the other loads' bursts)
#   AGG       best (default) or median: which of each row's repetitions
#             fit takes and the measured busbw is
#   RUNSDIR   a directory a KEEP=1 run left: fit and report its runs-N.csv
#             again (with this build and these knobs) instead of measuring
#   KEEP=1    keep the scratch directory (the CSVs, the model, the report)
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BACKEND=${BACKEND:-shm}
FIT=${FIT:-2 4}
PREDICT=${PREDICT:-8}
OPS=${OPS:-allreduce allgather reducescatter alltoall sendrecv}
MINBYTES=${MINBYTES:-8M}
MAXBYTES=${MAXBYTES:-128M}
if [ -z "${FITMIN:-}" ]; then
	llc=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || true)
	fewest=$(printf '%s\n' $FIT | sort -n | head -n 1)
	if [[ "$llc" =~ ^[0-9]+$ ]] && [ "$llc" -gt 0 ]; then
		fitmin=1
		while [ $((2 * fewest * fitmin)) -lt $((4 * llc)) ]; do fitmin=$((fitmin * 2)); done
		FITMIN=$fitmin
		if [ "$fitmin" -ge $((1 << 20)) ]; then FITMIN=$((fitmin >> 20))M; fi
	else
		FITMIN=32M
	fi
fi
VALMIN=${VALMIN:-32M}
ITERS=${ITERS:-5}
STAT=${STAT:-p50}
AGG=${AGG:-best}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-2}
ALGOS=${ALGOS-allreduce=twoshot allgather=rd reducescatter=direct alltoall=direct sendrecv=ring}
oplist=$(echo "$OPS" | tr ' ' ',')

algo_of() { # op: the algorithm ALGOS names for it, or auto
	local w
	for w in $ALGOS; do
		if [ "${w%%=*}" = "$1" ]; then
			echo "${w#*=}"
			return
		fi
	done
	echo auto
}

measure() { # ranks csv: one sweep of each op, its rows added to csv
	local op
	for op in $OPS; do
		"$bin" --backend "$BACKEND" -p "$1" --op "$op" --algo "$(algo_of "$op")" -b "$MINBYTES" -e "$MAXBYTES" -f 2 \
			-n "$ITERS" -w "$WARMUP" -c 0 --csv "$work/round.csv" >/dev/null
		if [ -s "$2" ]; then tail -n +2 "$work/round.csv" >>"$2"; else cp "$work/round.csv" "$2"; fi
	done
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "${RUNSDIR:-}" ]; then
	for n in $FIT $PREDICT; do
		cp "$RUNSDIR/runs-$n.csv" "$work/runs-$n.csv"
	done
	how="the runs kept in $RUNSDIR"
else
	# Round by round, every world once: each meets the same mix of other loads.
	for round in $(seq "$RUNS"); do
		for n in $FIT $PREDICT; do
			measure "$n" "$work/runs-$n.csv"
		done
		echo "# round $round of $RUNS measured (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	done
	how="$RUNS runs (algorithms: ${ALGOS:-auto}; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after)"
fi
fitted=()
for n in $FIT; do
	python3 "$repo/scripts/predict-report.py" "$AGG" "$STAT" "$work/runs-$n.csv" "$work/fit-$n.csv"
	fitted+=("$work/fit-$n.csv")
done
cp "$work/runs-$PREDICT.csv" "$work/measured.csv"
"$bin" fit --stat "$STAT" --min-size "$FITMIN" -o "$work/model.json" "${fitted[@]}" >"$work/fit.txt"
"$bin" predict --model "$work/model.json" --topology "servers=1,per-server=$PREDICT" --op "$oplist" \
	-b "$MINBYTES" -e "$MAXBYTES" -f 2 --csv "$work/predicted.csv" >/dev/null
valmin=$("$bin" predict --model "$work/model.json" --topology "servers=1,per-server=$PREDICT" --op "${oplist%%,*}" \
	-b "$VALMIN" -e "$VALMIN" --csv - | awk -F, 'NR == 2 { print $5 }') # predict's CSV has no quoted field

python3 "$repo/scripts/predict-report.py" report "$bin" "$work/model.json" "servers=1,per-server=$PREDICT" "$MINBYTES" "$MAXBYTES" \
	"$work/predicted.csv" "$work/measured.csv" "$valmin" "$STAT" "$AGG" \
	"$BACKEND: fitted on $FIT ranks (rows of $FITMIN and more, the $AGG of $how by their $STAT time), predicted $PREDICT"
