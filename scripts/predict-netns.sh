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
#   ITERS, WARMUP per row (default 3, 1)
#   RUNS      sweeps of each world, in rounds of one sweep of every world
#             (each meets the same other loads); fit takes the fastest of
#             each row's repetitions, and the measured busbw is the best of
#             them too: other loads only ever slow a run down (default 3)
#   AGG       best (default) or median: which of each row's repetitions
#             fit takes and the measured busbw is
#   HIER_OPS  collectives measured again on the predicted world with --algo
#             hier, to check the model's pick (default allreduce,allgather,
#             reducescatter; empty for none)
#   ONEPER    1 (default) also measures FITHOSTS hosts of one rank each and
#             fits it: beside FITHOSTS hosts of PER ranks it tells the fit
#             whether a host's ranks share its link (0: leave it out)
#   NETNS_PREFIX, NETNS_OCTET  the namespaces' name prefix and the second
#             octet of their addresses (default hp, 79), to keep apart from
#             another run of a netns script
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
RUNS=${RUNS:-3}
AGG=${AGG:-best}
HIER_OPS=${HIER_OPS-allreduce,allgather,reducescatter}
ONEPER=${ONEPER:-1}
oplist=$(echo "$OPS" | tr ' ' ',')

# shellcheck source=scripts/netns.sh
. "$repo/scripts/netns.sh"
netns_cluster "${NETNS_PREFIX:-hp}" "${NETNS_OCTET:-79}" "$PREDHOSTS"
# Each host's egress: what it sends to any other host.
for h in $(seq 0 $((PREDHOSTS - 1))); do
	ip netns exec "${hosts[$h]}" tc qdisc add dev "$(netns_veth "$h")" root tbf rate "$RATE" burst 256kb latency 100ms
done

port=29800
world() { # hosts csv [ops [algo [per]]]
	local per=${5:-$PER}
	local n=$(($1 * per)) pids=() r ops=${3:-$oplist} algo=${4:-auto}
	port=$((port + 1))
	for r in $(seq 0 $((n - 1))); do
		local h=$((r / per))
		env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR="$net.1" MASTER_PORT="$port" HCCL_TEST_SECRET="predict-netns-$id" \
			ip netns exec "${hosts[$h]}" "$bin" --backend proc --bind "$net.$((h + 1))" --topology auto \
			--op "$ops" --algo "$algo" -b "$MINBYTES" -e "$MAXBYTES" -f 2 -n "$ITERS" -w "$WARMUP" -c 0 \
			--link-bw 10GB/s -T 300s --connect-timeout 60s --csv "$work/round.csv" >/dev/null 2>"$work/err-$r" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || { cat "$work"/err-*; exit 1; }; done
	add "$2"
}
# add appends the rows of the sweep just made (round.csv) to $1.
add() {
	if [ -s "$1" ]; then tail -n +2 "$work/round.csv" >>"$1"; else cp "$work/round.csv" "$1"; fi
}
# One host: its ranks talk through shared memory only; --topology auto
# needs several, so it runs without.
world1() {
	port=$((port + 1))
	ip netns exec "${hosts[0]}" "$bin" --backend proc -p "$PER" --op "$oplist" -b "$MINBYTES" -e "$MAXBYTES" -f 2 \
		-n "$ITERS" -w "$WARMUP" -c 0 --link-bw 10GB/s --csv "$work/round.csv" >/dev/null
	add "$1"
}
# Round by round, every world once: each meets the same mix of other loads.
# The algorithm the model predicts fastest across servers, where auto
# picked another, is measured too (HIER_OPS), to check the pick.
: >"$work/measured-hier.csv"
for round in $(seq "$RUNS"); do
	world1 "$work/runs-1.csv"
	world "$FITHOSTS" "$work/runs-$FITHOSTS.csv"
	if [ "$ONEPER" = 1 ]; then
		world "$FITHOSTS" "$work/runs-${FITHOSTS}x1.csv" "$oplist" auto 1
	fi
	world "$PREDHOSTS" "$work/measured.csv"
	if [ -n "$HIER_OPS" ]; then
		world "$PREDHOSTS" "$work/measured-hier.csv" "$HIER_OPS" hier
	fi
	echo "# round $round of $RUNS measured" >&2
done
fits=()
for n in 1 "$FITHOSTS" "${FITHOSTS}x1"; do
	[ -s "$work/runs-$n.csv" ] || continue
	python3 "$repo/scripts/predict-report.py" "$AGG" p50 "$work/runs-$n.csv" "$work/fit-$n.csv"
	fits+=("$work/fit-$n.csv")
done
"$bin" fit --stat p50 -o "$work/model.json" "${fits[@]}" >"$work/fit.txt"
"$bin" predict --model "$work/model.json" --topology "servers=$PREDHOSTS,per-server=$PER" --op "$oplist" \
	-b "$MINBYTES" -e "$MAXBYTES" -f 2 --csv "$work/predicted.csv" >/dev/null
valmin=$("$bin" predict --model "$work/model.json" --topology "servers=$PREDHOSTS,per-server=$PER" --op "${oplist%%,*}" \
	-b "$VALMIN" -e "$VALMIN" --csv - | awk -F, 'NR == 2 { print $5 }') # predict's CSV has no quoted field
python3 "$repo/scripts/predict-report.py" report "$bin" "$work/model.json" "servers=$PREDHOSTS,per-server=$PER" "$MINBYTES" "$MAXBYTES" \
	"$work/predicted.csv" "$work/measured.csv,$work/measured-hier.csv" "$valmin" p50 "$AGG" \
	"proc across namespaces, $PER ranks a host, links of $RATE (tc tbf): fitted on 1 and $FITHOSTS hosts (the $AGG of $RUNS runs by their p50 time), predicted $PREDHOSTS"
