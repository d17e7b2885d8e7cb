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
#   MINBYTES, MAXBYTES  the measured sizes, by a factor of 2 (default 8M, 128M)
#   FITMIN    fit's --min-size (default 8M: smaller rows ran from cache here)
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
FITMIN=${FITMIN:-8M}
VALMIN=${VALMIN:-32M}
ITERS=${ITERS:-5}
STAT=${STAT:-p50}
AGG=${AGG:-best}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-2}
oplist=$(echo "$OPS" | tr ' ' ',')

measure() { # ranks csv: one sweep, its rows added to csv
	"$bin" --backend "$BACKEND" -p "$1" --op "$oplist" -b "$MINBYTES" -e "$MAXBYTES" -f 2 \
		-n "$ITERS" -w "$WARMUP" -c 0 --csv "$work/round.csv" >/dev/null
	if [ -s "$2" ]; then tail -n +2 "$work/round.csv" >>"$2"; else cp "$work/round.csv" "$2"; fi
}

# Round by round, every world once: each meets the same mix of other loads.
for round in $(seq "$RUNS"); do
	for n in $FIT $PREDICT; do
		measure "$n" "$work/runs-$n.csv"
	done
	echo "# round $round of $RUNS measured" >&2
done
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
	"$BACKEND: fitted on $FIT ranks (rows of $FITMIN and more, the best of $RUNS runs by their $STAT time), predicted $PREDICT"
