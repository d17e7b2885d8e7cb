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
#   RUNS      sweeps of each world (--runs); fit takes every run's rows, and
#             the measured busbw is the median of the runs' (default 3)
#   STAT      the time of a row fitted and compared: mean (the sweep's
#             time), p50 or min (default p50: on a loaded machine the
#             mean carries the other loads' bursts)
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
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-2}
oplist=$(echo "$OPS" | tr ' ' ',')

measure() { # ranks csv
	"$bin" --backend "$BACKEND" -p "$1" --op "$oplist" -b "$MINBYTES" -e "$MAXBYTES" -f 2 \
		-n "$ITERS" -w "$WARMUP" -c 0 --runs "$RUNS" --csv "$2" >/dev/null
}

fitted=()
for n in $FIT; do
	measure "$n" "$work/fit-$n.csv"
	fitted+=("$work/fit-$n.csv")
done
measure "$PREDICT" "$work/measured.csv"
"$bin" fit --stat "$STAT" --min-size "$FITMIN" -o "$work/model.json" "${fitted[@]}" >"$work/fit.txt"
"$bin" predict --model "$work/model.json" --topology "servers=1,per-server=$PREDICT" --op "$oplist" \
	-b "$MINBYTES" -e "$MAXBYTES" -f 2 --csv "$work/predicted.csv" >/dev/null
valmin=$("$bin" predict --model "$work/model.json" --topology "servers=1,per-server=$PREDICT" --op "${oplist%%,*}" \
	-b "$VALMIN" -e "$VALMIN" --csv - | awk -F, 'NR == 2 { print $5 }') # predict's CSV has no quoted field

python3 - "$bin" "$work/model.json" "servers=1,per-server=$PREDICT" "$MINBYTES" "$MAXBYTES" "$work/predicted.csv" "$work/measured.csv" "$valmin" "$STAT" "$BACKEND" "$FIT" "$FITMIN" "$PREDICT" <<'PY'
import csv, io, statistics, subprocess, sys
bin_, model, topo, minb, maxb = sys.argv[1:6]
del sys.argv[1:6]
pred_path, meas_path, valmin, stat, backend, fit, fitmin, predict = sys.argv[1:]
col = {"mean": "time_us", "p50": "p50_us", "min": "min_us"}[stat]
pred = {(r["op"], r["size_bytes"]): r for r in csv.DictReader(open(pred_path))}
print(f"# {backend}: fitted on {fit} ranks (rows of {fitmin} and more, their {stat} time), predicted {predict}; busbw at sizes of {int(valmin) >> 20} MiB and more")
print("# measured busbw from the row's", stat, "time, the median of the runs; error = |predicted - measured| / measured; in band = measured within the prediction's low..high")
runs = {}
for r in csv.DictReader(open(meas_path)):
    if int(r["size_bytes"]) >= int(valmin) and (r["op"], r["size_bytes"]) in pred:
        runs.setdefault((r["op"], r["size_bytes"]), []).append(r)
ran = {}
def predicted_as_ran(op, algo, size):
    """The model's row for op at size with the algorithm that ran."""
    if (op, algo) not in ran:
        out = subprocess.run([bin_, "predict", "--model", model, "--topology", topo, "--op", op, "--algo", algo,
                              "-b", minb, "-e", maxb, "-f", "2", "--csv", "-"], capture_output=True, text=True, check=True).stdout
        ran[(op, algo)] = {r["size_bytes"]: r for r in csv.DictReader(io.StringIO(out))}
    return ran[(op, algo)][size]
errs, fast, inband, order = {}, {}, {}, []
for key, rs in runs.items():
    r = rs[0]
    algo = r["algo"].split(":")[-1]
    p = predicted_as_ran(r["op"], algo, r["size_bytes"])
    m = statistics.median(float(x["busbw_GBps"]) * float(x["time_us"]) / float(x[col]) for x in rs)
    e = abs(float(p["busbw_GBps"]) - m) / m * 100
    f = abs(float(pred[key]["busbw_GBps"]) - m) / m * 100
    ok = float(p["busbw_low_GBps"]) <= m <= float(p["busbw_high_GBps"])
    if r["op"] not in errs:
        order.append(r["op"])
    errs.setdefault(r["op"], []).append(e)
    fast.setdefault(r["op"], []).append(f)
    inband[r["op"]] = inband.get(r["op"], 0) + ok
    print(f'{r["op"]:<14} {int(r["size_bytes"]):>10}  measured {m:8.3f} ({algo})  predicted {float(p["busbw_GBps"]):8.3f}  '
          f'band {float(p["busbw_low_GBps"]):.3f}..{float(p["busbw_high_GBps"]):.3f}  err {e:6.1f}%  '
          f'fastest of ours {pred[key]["algo"]} {float(pred[key]["busbw_GBps"]):.3f} ({f:.1f}%)')
print("# err: the model's busbw for the algorithm that ran; fastest: its busbw for the algorithm it predicts fastest")
print(f'{"op":<14} {"rows":>5} {"median%":>8} {"worst%":>8} {"in band":>8} {"fastest median%":>16}')
for op in order:
    print(f"{op:<14} {len(errs[op]):>5} {statistics.median(errs[op]):8.1f} {max(errs[op]):8.1f} {inband[op]:>5}/{len(errs[op])} {statistics.median(fast[op]):16.1f}")
PY
