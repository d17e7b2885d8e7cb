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
#   LAUNCH    env (default): each rank a process started here with RANK,
#             WORLD_SIZE, MASTER_ADDR and MASTER_PORT, as torchrun sets
#             them; srun: one srun step of all the ranks on a single-host
#             Slurm that scripts/slurm-single-host.sh starts (and stops)
#             in the scratch directory (needs slurm-wlm and munge)
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
LAUNCH=${LAUNCH:-env}
case $LAUNCH in
env | srun) ;;
*) echo "LAUNCH=$LAUNCH: want env or srun" >&2; exit 2 ;;
esac

# shellcheck source=scripts/netns.sh
. "$repo/scripts/netns.sh"
hog=
NETNS_UNDO='[ -n "$hog" ] && kill "$hog" 2>/dev/null; [ -f "$work/slurm/slurm.conf" ] && "$repo/scripts/slurm-single-host.sh" stop "$work/slurm"'
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
export HCCL_TEST_SECRET="isolate-netns-$id"
if [ "$LAUNCH" = srun ]; then
	# One srun step of n tasks on this machine's single-host Slurm; each
	# task enters its host's namespace by its SLURM_PROCID, and meets rank
	# 0 at --master (srun's node list names this machine, whose address
	# the namespaces cannot reach). The task writes its exit status (srun's
	# own is the largest of its tasks').
	"$repo/scripts/slurm-single-host.sh" start "$work/slurm" >/dev/null
	export SLURM_CONF=$work/slurm/slurm.conf
	task=$work/task.sh
	{
		echo '#!/usr/bin/env bash'
		printf 'hosts=(%s)\n' "$(printf '%q ' "${hosts[@]}")"
		printf 'cmd=(%s)\n' "$(printf '%q ' "${cmd[@]}")"
		printf 'r=$SLURM_PROCID h=$((SLURM_PROCID / %d)) extra=()\n' "$PER"
		printf '[ "$r" = 0 ] && extra=(--csv %q -o %q)\n' "$work/pairs.csv" "$work/heatmap.svg"
		printf 'ip netns exec "${hosts[$h]}" "${cmd[@]}" --bind "%s.$((h + 1))" --master %q "${extra[@]}"\n' "$net" "$net.1:$port"
		printf 'rc=$?; echo $rc >%q/rc-$r; exit $rc\n' "$work"
	} >"$task"
	chmod +x "$task"
	echo "# srun -O -n $n --output=out-%t --error=err-%t task.sh; task r: ip netns exec NS(r / $PER) ${cmd[*]} --bind ADDR --master $net.1:$port [--csv pairs.csv -o heatmap.svg on rank 0]"
	began=$(date +%s.%N)
	srun -O -n "$n" --output="$work/out-%t" --error="$work/err-%t" "$task" &
	srunpid=$!
else
	echo "# each rank: RANK=r WORLD_SIZE=$n MASTER_ADDR=$net.1 ip netns exec NS ${cmd[*]} --bind ADDR --csv pairs.csv -o heatmap.svg (rank 0's)"
	began=$(date +%s.%N)
	pids=()
	for r in $(seq 0 $((n - 1))); do
		h=$((r / PER))
		extra=()
		[ "$r" = 0 ] && extra=(--csv "$work/pairs.csv" -o "$work/heatmap.svg")
		env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR="$net.1" MASTER_PORT="$port" \
			ip netns exec "${hosts[$h]}" "${cmd[@]}" --bind "$net.$((h + 1))" "${extra[@]}" >"$work/out-$r" 2>"$work/err-$r" &
		pids+=($!)
	done
fi
(sleep "$DOWNAFTER" && ip -n "${hosts[$DOWN]}" link set "$(netns_veth "$DOWN")" down && echo "# $(date +%T) took $net.$((DOWN + 1))'s link down" >&2) &
downer=$!
rc0=0
codes=()
if [ "$LAUNCH" = srun ]; then
	srunrc=0
	wait "$srunpid" || srunrc=$?
	ended=$(date +%s.%N)
	ended_all=$ended
	rc0=$(cat "$work/rc-0" 2>/dev/null || echo "none (srun exit $srunrc)")
	for r in $(seq 1 $((n - 1))); do codes+=("$(cat "$work/rc-$r" 2>/dev/null || echo -)"); done
	echo "# srun exit $srunrc"
else
	wait "${pids[0]}" || rc0=$?
	ended=$(date +%s.%N)
	for p in "${pids[@]:1}"; do
		c=0
		wait "$p" || c=$?
		codes+=("$c")
	done
	ended_all=$(date +%s.%N)
fi
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
