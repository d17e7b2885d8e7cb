#!/usr/bin/env bash
# Checks fit and predict across hosts: network namespaces on this machine
# stand for hosts, joined by a bridge, each one's link rate-limited by a tc
# token bucket (tbf; netem is not in every kernel), with PER proc ranks in
# each. It measures one host, FITHOSTS hosts and PREDHOSTS hosts, fits the
# runs of one and FITHOSTS hosts only, predicts PREDHOSTS hosts, and prints
# per collective the median and worst absolute percentage error of busbw at
# the validated sizes, and how many measured rows fell inside the band.
# Needs root, ip(8) and tc(8).
#
#   scripts/predict-netns.sh
#   RATE=2gbit PER=2 FITHOSTS=2 PREDHOSTS=4 scripts/predict-netns.sh
#
# Env knobs:
#   RATE      each host's egress rate (tc tbf; default 500mbit)
#   PER       ranks per host (default 2)
#   FITHOSTS, PREDHOSTS  hosts fitted and predicted (default 2, 4)
#   OPS       collectives (default "allreduce allgather reducescatter alltoall sendrecv")
#   MINBYTES, MAXBYTES  the sizes, by a factor of 2 (default 4M, 32M)
#   VALMIN    the smallest size validated (default 8M)
#   ITERS, WARMUP, RUNS  per row and sweeps of each world (default 3, 1, 1)
#   HIER_OPS  collectives measured again on the predicted world with --algo
#             hier, to check the model's pick (default allreduce,allgather,
#             reducescatter; empty for none)
#   KEEP=1    keep the scratch directory
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RATE=${RATE:-500mbit}
PER=${PER:-2}
FITHOSTS=${FITHOSTS:-2}
PREDHOSTS=${PREDHOSTS:-4}
OPS=${OPS:-allreduce allgather reducescatter alltoall sendrecv}
MINBYTES=${MINBYTES:-4M}
MAXBYTES=${MAXBYTES:-32M}
VALMIN=${VALMIN:-8M}
ITERS=${ITERS:-3}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-1}
HIER_OPS=${HIER_OPS-allreduce,allgather,reducescatter}
oplist=$(echo "$OPS" | tr ' ' ',')

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
	echo "needs root, ip(8) and tc(8)" >&2
	exit 2
fi
id=$(($$ % 10000))
net=10.79.$((id % 250 + 1))
br=hpbr$id
hosts=()
undo() {
	for h in "${hosts[@]}"; do ip netns del "$h" 2>/dev/null || true; done
	ip link del "$br" 2>/dev/null || true
	cleanup
}
trap undo EXIT
ip link add "$br" type bridge
ip link set "$br" up
for h in $(seq 0 $((PREDHOSTS - 1))); do
	ns=hp$id-$h
	ip netns add "$ns"
	hosts+=("$ns")
	ip link add "hpv$id$h" type veth peer name "hpp$id$h"
	ip link set "hpv$id$h" netns "$ns"
	ip link set "hpp$id$h" master "$br"
	ip link set "hpp$id$h" up
	ip -n "$ns" addr add "$net.$((h + 1))/24" dev "hpv$id$h"
	ip -n "$ns" link set "hpv$id$h" up
	ip -n "$ns" link set lo up
	# The host's egress: what it sends to any other host.
	ip netns exec "$ns" tc qdisc add dev "hpv$id$h" root tbf rate "$RATE" burst 256kb latency 100ms
done

port=29800
world() { # hosts csv [ops [algo]]
	local n=$(($1 * PER)) pids=() r ops=${3:-$oplist} algo=${4:-auto}
	port=$((port + 1))
	for r in $(seq 0 $((n - 1))); do
		local h=$((r / PER))
		env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR="$net.1" MASTER_PORT="$port" HCCL_TEST_SECRET="predict-netns-$id" \
			ip netns exec "${hosts[$h]}" "$bin" --backend proc --bind "$net.$((h + 1))" --topology auto \
			--op "$ops" --algo "$algo" -b "$MINBYTES" -e "$MAXBYTES" -f 2 -n "$ITERS" -w "$WARMUP" -c 0 --runs "$RUNS" \
			--link-bw 10GB/s -T 300s --connect-timeout 60s --csv "$2" >/dev/null 2>"$work/err-$r" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || { cat "$work"/err-*; exit 1; }; done
}
# One host: its ranks talk through shared memory only; --topology auto
# needs several, so it runs without.
world1() {
	port=$((port + 1))
	ip netns exec "${hosts[0]}" "$bin" --backend proc -p "$PER" --op "$oplist" -b "$MINBYTES" -e "$MAXBYTES" -f 2 \
		-n "$ITERS" -w "$WARMUP" -c 0 --runs "$RUNS" --link-bw 10GB/s --csv "$1" >/dev/null
}
world1 "$work/fit-1.csv"
world "$FITHOSTS" "$work/fit-$FITHOSTS.csv"
world "$PREDHOSTS" "$work/measured.csv"
# The algorithm the model predicts fastest across servers, where auto
# picked another: measured too, to check the pick.
if [ -n "$HIER_OPS" ]; then
	world "$PREDHOSTS" "$work/measured-hier.csv" "$HIER_OPS" hier
else
	: >"$work/measured-hier.csv"
fi
"$bin" fit --stat p50 -o "$work/model.json" "$work/fit-1.csv" "$work/fit-$FITHOSTS.csv" >"$work/fit.txt"
"$bin" predict --model "$work/model.json" --topology "servers=$PREDHOSTS,per-server=$PER" --op "$oplist" \
	-b "$MINBYTES" -e "$MAXBYTES" -f 2 --csv "$work/predicted.csv" >/dev/null
valmin=$("$bin" predict --model "$work/model.json" --topology "servers=$PREDHOSTS,per-server=$PER" --op "${oplist%%,*}" \
	-b "$VALMIN" -e "$VALMIN" --csv - | awk -F, 'NR == 2 { print $5 }') # predict's CSV has no quoted field
python3 - "$bin" "$work/model.json" "servers=$PREDHOSTS,per-server=$PER" "$MINBYTES" "$MAXBYTES" "$work/predicted.csv" "$work/measured.csv,$work/measured-hier.csv" "$valmin" "$RATE" "$PER" "$FITHOSTS" "$PREDHOSTS" <<'PY'
import csv, io, statistics, subprocess, sys
bin_, model, topo, minb, maxb = sys.argv[1:6]
del sys.argv[1:6]
pred_path, meas_path, valmin, rate, per, fit, predict = sys.argv[1:]
col = "p50_us"
pred = {(r["op"], r["size_bytes"]): r for r in csv.DictReader(open(pred_path))}
print(f"# proc across namespaces, {per} ranks a host, links of {rate} (tc tbf): fitted on 1 and {fit} hosts, predicted {predict}; busbw at {int(valmin) >> 20} MiB and more")
print("# measured busbw from the row's p50 time, the median of the runs; error = |predicted - measured| / measured")
runs = {}
for path in meas_path.split(","):
    for r in csv.DictReader(open(path)):
        if int(r["size_bytes"]) >= int(valmin) and (r["op"], r["size_bytes"]) in pred:
            runs.setdefault((r["op"], r["size_bytes"], r["algo"].split(":")[-1]), []).append(r)
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
    f = abs(float(pred[key[:2]]["busbw_GBps"]) - m) / m * 100
    ok = float(p["busbw_low_GBps"]) <= m <= float(p["busbw_high_GBps"])
    name = r["op"] + "/" + algo
    if name not in errs:
        order.append(name)
    errs.setdefault(name, []).append(e)
    fast.setdefault(name, []).append(f)
    inband[name] = inband.get(name, 0) + ok
    print(f'{r["op"]:<14} {int(r["size_bytes"]):>10}  measured {m:8.3f} ({algo})  predicted {float(p["busbw_GBps"]):8.3f}  '
          f'band {float(p["busbw_low_GBps"]):.3f}..{float(p["busbw_high_GBps"]):.3f}  err {e:6.1f}%  '
          f'fastest of ours {pred[key[:2]]["algo"]} {float(pred[key[:2]]["busbw_GBps"]):.3f} ({f:.1f}%)')
print("# err: the model's busbw for the algorithm that ran; fastest: its busbw for the algorithm it predicts fastest")
print(f'{"op/ran":<22} {"rows":>5} {"median%":>8} {"worst%":>8} {"in band":>8} {"fastest median%":>16}')
for op in order:
    print(f"{op:<22} {len(errs[op]):>5} {statistics.median(errs[op]):8.1f} {max(errs[op]):8.1f} {inband[op]:>5}/{len(errs[op])} {statistics.median(fast[op]):16.1f}")
PY
