#!/usr/bin/env python3
"""The reports of predict-validate.sh and predict-netns.sh: one home.

  predict-report.py best|median STAT IN OUT
      Writes IN's rows to OUT keeping, of each row's repetitions (the
      sweeps of one world: same op, ranks, topology, algorithm, placement
      and size), the one of the fastest STAT time (mean, p50 or min):
      best of N, what fit takes on a machine whose other loads only ever
      slow a run down; or (median) the one of the median time.

  predict-report.py report BIN MODEL TOPOLOGY MINBYTES MAXBYTES PREDICTED MEASURED[,MEASURED...] VALMIN STAT AGG TITLE
      Prints per measured row (of VALMIN bytes and more) the measured
      busbw (from the best, or with AGG median the median, of its
      repetitions' STAT time), the model's
      busbw for the algorithm that ran, the band, the error, and the
      model's fastest algorithm; then per collective and algorithm that
      ran the median and worst absolute error and how many measured rows
      fell inside the band.
"""
import csv
import io
import statistics
import subprocess
import sys

COLUMNS = {"mean": "time_us", "p50": "p50_us", "min": "min_us"}
AGGS = ("best", "median")
KEY = ("op", "ranks", "topology", "algo", "in_place", "dtype", "size_bytes")


def pick(agg, stat, src, dst):
    col = COLUMNS[stat]
    with open(src, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    reps, order = {}, []
    for r in rows:
        k = tuple(r.get(c, "") for c in KEY)
        if k not in reps:
            order.append(k)
        reps.setdefault(k, []).append(r)
    keep = {k: choose(agg, rs, col) for k, rs in reps.items()}
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for k in order:
            w.writerow(keep[k])
    print(f"# {src}: {len(rows)} rows, the {agg} of their repetitions by {stat}: {len(order)}", file=sys.stderr)


def choose(agg, rs, col):
    """The fastest of rs by col (best), or the median one (the slower of
    the middle two of an even count)."""
    rs = sorted(rs, key=lambda r: float(r[col]))
    return rs[0] if agg == "best" else rs[len(rs) // 2]


def report(bin_, model, topo, minb, maxb, pred_path, meas_paths, valmin, stat, agg, title):
    col = COLUMNS[stat]
    pred = {(r["op"], r["size_bytes"]): r for r in csv.DictReader(open(pred_path))}
    print(f"# {title}; busbw at {int(valmin) >> 20} MiB and more")
    print(f"# measured busbw: the {agg} of each row's repetitions, from its {stat} time; "
          "error = |predicted - measured| / measured; in band = measured within the prediction's low..high")
    runs = {}
    for path in meas_paths.split(","):
        for r in csv.DictReader(open(path)):
            if int(r["size_bytes"]) >= int(valmin) and (r["op"], r["size_bytes"]) in pred:
                runs.setdefault((r["op"], r["size_bytes"], r["algo"].split(":")[-1]), []).append(r)
    ran = {}

    def predicted_as_ran(op, algo, size):
        """The model's row for op at size with the algorithm that ran."""
        if (op, algo) not in ran:
            out = subprocess.run([bin_, "predict", "--model", model, "--topology", topo, "--op", op, "--algo", algo,
                                  "-b", minb, "-e", maxb, "-f", "2", "--csv", "-"],
                                 capture_output=True, text=True, check=True).stdout
            ran[(op, algo)] = {r["size_bytes"]: r for r in csv.DictReader(io.StringIO(out))}
        return ran[(op, algo)][size]

    errs, fast, inband, order = {}, {}, {}, []
    for key, rs in runs.items():
        op, size, algo = key
        p = predicted_as_ran(op, algo, size)
        x = choose(agg, rs, col)
        m = float(x["busbw_GBps"]) * float(x["time_us"]) / float(x[col])
        e = abs(float(p["busbw_GBps"]) - m) / m * 100
        f = abs(float(pred[key[:2]]["busbw_GBps"]) - m) / m * 100
        ok = float(p["busbw_low_GBps"]) <= m <= float(p["busbw_high_GBps"])
        name = op + "/" + algo
        if name not in errs:
            order.append(name)
        errs.setdefault(name, []).append(e)
        fast.setdefault(name, []).append(f)
        inband[name] = inband.get(name, 0) + ok
        print(f'{op:<14} {int(size):>10}  measured {m:8.3f} ({algo}, {agg} of {len(rs)})  '
              f'predicted {float(p["busbw_GBps"]):8.3f}  '
              f'band {float(p["busbw_low_GBps"]):.3f}..{float(p["busbw_high_GBps"]):.3f}  err {e:6.1f}%  '
              f'fastest of ours {pred[key[:2]]["algo"]} {float(pred[key[:2]]["busbw_GBps"]):.3f} ({f:.1f}%)')
    print("# err: the model's busbw for the algorithm that ran; fastest: its busbw for the algorithm it predicts fastest")
    print(f'{"op/ran":<22} {"rows":>5} {"median%":>8} {"worst%":>8} {"in band":>8} {"fastest median%":>16}')
    for name in order:
        print(f"{name:<22} {len(errs[name]):>5} {statistics.median(errs[name]):8.1f} {max(errs[name]):8.1f} "
              f"{inband[name]:>5}/{len(errs[name])} {statistics.median(fast[name]):16.1f}")


def main(argv):
    if len(argv) == 5 and argv[1] in AGGS and argv[2] in COLUMNS:
        pick(argv[1], argv[2], argv[3], argv[4])
    elif len(argv) == 13 and argv[1] == "report" and argv[10] in COLUMNS and argv[11] in AGGS:
        report(*argv[2:])
    else:
        print("usage: predict-report.py best|median STAT IN OUT, or report BIN MODEL TOPOLOGY MINBYTES MAXBYTES "
              "PREDICTED MEASURED VALMIN STAT AGG TITLE (STAT: mean, p50 or min; see the file's top)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, KeyError, ValueError, subprocess.CalledProcessError) as e:
        print(f"predict-report.py: {e}", file=sys.stderr)
        sys.exit(2)
