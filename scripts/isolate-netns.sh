#!/usr/bin/env bash
# Runs the live search of hccl-test isolate on a cluster of network
# namespaces: HOSTS namespaces on one bridge stand for hosts, each with PER
# proc ranks of its own. One host's link is rate-limited (tc tbf, egress
# and, through the bridge port, ingress), one host's link is taken down
# while the search runs, and one host is merely busy (a CPU hog in its
# namespace). It prints the command, the search's report, its exit status
# and wall time, and checks that the limited and the downed host are named
# and that the search ended within its limits ((slots + 2) x --timeout,
# plus the setting up). Needs root, ip(8) and tc(8).
#
#   scripts/isolate-netns.sh
#   HOSTS=8 PER=1 RATE=50mbit scripts/isolate-netns.sh
#
# Env knobs:
#   HOSTS     namespaces (default 6, at least 4)
#   PER       ranks per namespace (default 2)
#   RATE      the limited host's rate (default 40mbit)
#   SLOW      the limited host's index (default 1); DOWN the downed one
#             (default 3); BUSY the busy one (default 4, empty for none)
#   DOWNAFTER seconds after the start that DOWN's link goes down (default 6)
#   SIZE, ITERS, TIMEOUT  the search's --size, -n, --timeout (default 4M, 5, 20s)
#   KEEP=1    keep the scratch directory (report, CSV, heatmap, logs)
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

HOSTS=${HOSTS:-6}
PER=${PER:-2}
RATE=${RATE:-40mbit}
SLOW=${SLOW:-1}
DOWN=${DOWN:-3}
BUSY=${BUSY-4}
DOWNAFTER=${DOWNAFTER:-6}
SIZE=${SIZE:-4M}
ITERS=${ITERS:-5}
TIMEOUT=${TIMEOUT:-20s}

# shellcheck source=scripts/netns.sh
. "$repo/scripts/netns.sh"
hog=
NETNS_UNDO='[ -n "$hog" ] && kill "$hog" 2>/dev/null'
netns_cluster is 77 "$HOSTS"
# The limited host: what it sends (its veth's egress) and what it receives
# (its bridge port's egress), each through a token bucket.
ip netns exec "${hosts[$SLOW]}" tc qdisc add dev "$(netns_veth "$SLOW")" root tbf rate "$RATE" burst 64kb latency 50ms
tc qdisc add dev "$(netns_port "$SLOW")" root tbf rate "$RATE" burst 64kb latency 50ms
if [ -n "$BUSY" ]; then
	ip netns exec "${hosts[$BUSY]}" sh -c 'while :; do :; done' &
	hog=$!
fi

timeout=${TIMEOUT%s}
n=$((HOSTS * PER))
port=$((29000 + 10#$id % 500))
cmd=("$bin" isolate --backend proc --size "$SIZE" -n "$ITERS" -T "$TIMEOUT" --connect-timeout 60s)
echo "# $HOSTS namespaces x $PER proc ranks; limited: $net.$((SLOW + 1)) ($RATE), downed after ${DOWNAFTER}s: $net.$((DOWN + 1)), busy: ${BUSY:+$net.$((BUSY + 1))}"
echo "# each rank: RANK=r WORLD_SIZE=$n MASTER_ADDR=$net.1 ip netns exec NS ${cmd[*]} --bind ADDR --csv pairs.csv -o heatmap.svg (rank 0's)"
began=$(date +%s.%N)
pids=()
for r in $(seq 0 $((n - 1))); do
	h=$((r / PER))
	extra=()
	[ "$r" = 0 ] && extra=(--csv "$work/pairs.csv" -o "$work/heatmap.svg")
	env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR="$net.1" MASTER_PORT="$port" HCCL_TEST_SECRET="isolate-netns-$id" \
		ip netns exec "${hosts[$h]}" "${cmd[@]}" --bind "$net.$((h + 1))" "${extra[@]}" >"$work/out-$r" 2>"$work/err-$r" &
	pids+=($!)
done
(sleep "$DOWNAFTER" && ip -n "${hosts[$DOWN]}" link set "$(netns_veth "$DOWN")" down && echo "# $(date +%T) took $net.$((DOWN + 1))'s link down" >&2) &
downer=$!
rc0=0
wait "${pids[0]}" || rc0=$?
ended=$(date +%s.%N)
codes=()
for p in "${pids[@]:1}"; do
	c=0
	wait "$p" || c=$?
	codes+=("$c")
done
ended_all=$(date +%s.%N)
wait "$downer" || true
cat "$work/out-0"
cat "$work/err-0" >&2
wall=$(echo "$ended - $began" | bc)
echo "# rank 0 exit $rc0, wall ${wall}s; the other ranks' exits: ${codes[*]}, the last ended after $(echo "$ended_all - $began" | bc)s"
fail=0
for h in "$SLOW" "$DOWN"; do
	if ! grep -q "^named host [0-9]*: $net.$((h + 1))," "$work/out-0"; then
		echo "FAIL: $net.$((h + 1)) not named" >&2
		fail=1
	fi
done
if [ -n "$BUSY" ] && grep -q "^named host [0-9]*: $net.$((BUSY + 1))," "$work/out-0"; then
	echo "# the busy host $net.$((BUSY + 1)) is named: see its pairs above, slower than the rule allows" >&2
fi
# Rounds: HOSTS-1 (even) or HOSTS (odd); one slot a level of halvings.
rounds=$(( HOSTS % 2 ? HOSTS : HOSTS - 1 ))
levels=0
g=$HOSTS
while [ "$g" -ge 4 ]; do levels=$((levels + 1)); g=$(((g + 1) / 2)); done
limit=$(( (rounds + levels + 2) * timeout + 60 ))
if [ "$(echo "$wall > $limit" | bc)" = 1 ]; then
	echo "FAIL: wall ${wall}s, more than the limits' ${limit}s" >&2
	fail=1
fi
[ "$rc0" = 3 ] || { echo "FAIL: rank 0 exit $rc0, want 3" >&2; fail=1; }
exit "$fail"
