#!/usr/bin/env bash
# Starts, or stops, a single-host Slurm (Debian's slurm-wlm and munge) in a
# scratch directory, without systemd, for running a real srun:
#
#   scripts/slurm-single-host.sh start DIR   # prints SLURM_CONF=DIR/slurm.conf once a node is idle
#   SLURM_CONF=DIR/slurm.conf srun -n 4 ./hccl-test --backend tcp
#   scripts/slurm-single-host.sh stop DIR    # ends the daemons it started
#
# Needs root (slurmd runs tasks as their user) and the packages slurm-wlm
# and munge. munged runs as its user with its socket in a directory of its own; slurmctld and
# slurmd listen on 127.0.0.1 only, on two free ports picked at random; the
# node claims 4 CPUs so that srun -n 4 runs on a 2-core machine. Everything,
# pid files included, stays in DIR.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 dir=$2

stop() {
	for f in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$f"
	done
	if [ -s "$dir"/munge.dir ]; then
		rm -rf "$(cat "$dir"/munge.dir)"
		rm -f "$dir"/munge.dir
	fi
}

# freeport prints a TCP port from 40000 to 44999 that nothing listens on.
freeport() {
	for _ in $(seq 100); do
		p=$((40000 + RANDOM % 5000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port" >&2
	exit 1
}

case $cmd in
stop)
	stop
	exit 0
	;;
start) ;;
*) usage ;;
esac

[ "$(id -u)" = 0 ] || { echo "$0: needs root (slurmd)" >&2; exit 1; }
for b in munged slurmctld slurmd srun; do
	command -v "$b" >/dev/null || { echo "$0: $b is not installed (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
[ -r /etc/munge/munge.key ] || { echo "$0: no /etc/munge/munge.key" >&2; exit 1; }

mkdir -p "$dir"/state "$dir"/spool "$dir"/log
# munged runs as its user, which may not be able to enter DIR: its socket
# and files go to a directory of its own under /tmp.
mdir=$(mktemp -d /tmp/slurm-single-host-munge.XXXXXX)
echo "$mdir" >"$dir"/munge.dir
chown munge: "$mdir"
chmod 0755 "$mdir"
trap 'stop' ERR

host=$(hostname -s)
cat >"$dir"/slurm.conf <<EOF
ClusterName=single
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(freeport)
SlurmdPort=$(freeport)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$mdir/munge.socket
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MailProg=/bin/true
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

runuser -u munge -- munged --socket="$mdir"/munge.socket --pid-file="$mdir"/munged.pid \
	--seed-file="$mdir"/munge.seed --log-file="$mdir"/munged.log
for _ in $(seq 50); do [ -s "$mdir"/munged.pid ] && break; sleep 0.1; done
cp "$mdir"/munged.pid "$dir"/munged.pid
setsid slurmctld -D >"$dir"/log/slurmctld.out 2>&1 </dev/null &
echo $! >"$dir"/slurmctld.pid
setsid slurmd -D >"$dir"/log/slurmd.out 2>&1 </dev/null &
echo $! >"$dir"/slurmd.pid

# Wait, by the clock, for the node to be idle: sinfo itself can take
# seconds while slurmctld is not up yet. A daemon that died (a port taken
# between freeport and its bind) ends the wait at once, with its log.
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
	if timeout 3 sinfo -h -o %t 2>/dev/null | grep -qx idle; then
		echo "SLURM_CONF=$SLURM_CONF"
		exit 0
	fi
	for d in slurmctld slurmd; do
		if ! kill -0 "$(cat "$dir/$d.pid")" 2>/dev/null; then
			echo "$0: $d exited; the end of its log:" >&2
			tail -n 5 "$dir/log/$d.log" "$dir/log/$d.out" >&2 2>/dev/null || true
			stop
			exit 1
		fi
	done
	sleep 0.1
done
echo "$0: the node is not idle after 30s; the end of the logs:" >&2
tail -n 5 "$dir"/log/*.log >&2 2>/dev/null || true
stop
exit 1
