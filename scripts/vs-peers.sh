#!/usr/bin/env bash
# Puts hccl-test next to its peers, each timed by its own benchmark as its
# users run it, side by side in one run, and prints one table of ratios:
#
#   ours, shared memory: hccl-test --backend shm -p N --benchtime T   (ranks are goroutines)
#   ours, TCP:           hccl-test --backend tcp -p N --benchtime T   (ranks are processes, loopback)
#   ours, processes:     hccl-test --backend proc -p N --benchtime T  (ranks are processes sharing memory)
#   Open MPI, vader:     mpirun --mca btl self,vader mpi_coll_bench -t T (MPI's own collectives,
#   Open MPI, tcp:       mpirun --mca btl self,tcp   mpi_coll_bench -t T  in a C program of its own)
#   Gloo:                python3 gloo_bench.py -n N -t T              (torch.distributed on CPU)
#   iperf3:              iperf3 over 127.0.0.1, 1 and 2 streams       (the loopback stack's copy rate)
#
# Open MPI runs as its users tune it: -x MALLOC_MMAP_MAX_=0 -x
# MALLOC_TRIM_THRESHOLD_=17179869184 keep its temporary buffers on reused
# heap pages rather than fresh ones (up to 7x at 64 MiB on a VM).
#
# Under the table, each side's spread per row (its slowest repetition over
# its fastest) shows how much the host's noise moved it: a ratio between two
# sides that is inside their spreads is a draw, not a result. Under that,
# each pair's ratio of medians, and in how many repetitions ours was the
# faster (a repetition runs every side of a row within seconds): the best of
# several favours the side whose repetitions spread the wider.
#
# Rows: fp32 allreduce (sum) at 2 and 8 ranks for 1 KiB, 1 MiB and 64 MiB;
# allgather, reducescatter, broadcast and alltoall at 8 ranks for 64 MiB.
# Sizes follow nccl-tests (the whole buffer per rank; allgather the gathered
# output). Every side's time is the slowest rank's mean per call (Open MPI's
# benchmark prints it as max_us), each row timed for about T. Ratios are the
# peer's time / ours: above 1 means ours is faster. shm and proc are compared
# with vader, tcp with Open MPI's tcp, and Gloo (TCP only) with our tcp and
# proc; shm/proc is proc against our in-process backend (above 0.8: within 25%).
#
# This answers "which tool is faster, each measured as its users measure
# it". scripts/vs-mpi.sh answers another question: Open MPI's collectives
# called from inside hccl-test (--backend mpi --algo native), the same
# harness timing both; IN_HARNESS=1 appends its tables, labelled so.
#
#   scripts/vs-peers.sh --peers DIR          # DIR holds mpi_coll_bench.c and gloo_bench.py
#   PEERS=DIR REPS=3 scripts/vs-peers.sh
#
# Env knobs:
#   PEERS       the peers' sources (or --peers DIR); copied to a scratch
#               directory and built there, so DIR may be read-only
#   REPS        repetitions (default 2, at least 2); each runs every side in
#               turn, and the table keeps per row and side the lowest time
#   BENCHTIME   timed work per row and side (default 0.3s; Go duration)
#   SIDES       the sides to run (default "shm proc vader tcp mpitcp gloo iperf")
#   HCCL_TEST   the hccl-test to measure, instead of building one
#   TIMEOUT     seconds one run may take (default 600)
#   IN_HARNESS  1 also runs scripts/vs-mpi.sh (needs libopenmpi-dev)
#   KEEP        1 keeps the scratch directory with every raw output
#
# Needs Open MPI (openmpi-bin, libopenmpi-dev for mpicc), iperf3 and
# Debian's python3-torch (run with /usr/bin/python3); a missing peer is
# reported and its column left empty. Every run checks its results; a
# wrong element stops the script. Progress goes to stderr, the table to
# stdout.
set -euo pipefail

PEERS=${PEERS:-}
while (($#)); do
	case $1 in
	--peers) PEERS=${2:-}; shift 2 ;;
	--peers=*) PEERS=${1#--peers=}; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-peers: unknown argument '$1' (want --peers DIR)" >&2; exit 2 ;;
	esac
done

REPS=${REPS:-2}
BENCHTIME=${BENCHTIME:-0.3s}
SIDES=${SIDES:-"shm proc vader tcp mpitcp gloo iperf"}
TIMEOUT=${TIMEOUT:-600}
IN_HARNESS=${IN_HARNESS:-0}
PYTHON=${PYTHON:-/usr/bin/python3}

die() { echo "vs-peers: $*" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

[[ -n $PEERS ]] || die "no peers' sources: give --peers DIR or PEERS=DIR (the folder with mpi_coll_bench.c and gloo_bench.py)"
[[ -f $PEERS/mpi_coll_bench.c && -f $PEERS/gloo_bench.py ]] || die "PEERS=$PEERS: no mpi_coll_bench.c and gloo_bench.py there"
[[ $REPS =~ ^[0-9]+$ ]] && ((REPS >= 2)) || die "REPS: '$REPS' is not a whole number of at least 2"
[[ $BENCHTIME =~ ^[0-9]*\.?[0-9]+(ms|s)$ ]] || die "BENCHTIME: '$BENCHTIME' is not a duration like 300ms or 0.3s"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "TIMEOUT: '$TIMEOUT' is not a positive number of seconds"
for s in $SIDES; do
	[[ $s =~ ^(shm|proc|vader|tcp|mpitcp|gloo|iperf)$ ]] || die "SIDES: unknown side '$s'"
done
has() { [[ " $SIDES " == *" $1 "* ]]; }
# seconds as mpi_coll_bench and gloo_bench.py take them
if [[ $BENCHTIME == *ms ]]; then secs=$(awk -v v="${BENCHTIME%ms}" 'BEGIN { print v / 1000 }'); else secs=${BENCHTIME%s}; fi

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ok=0
trap 'if [[ $ok != 1 ]]; then KEEP=1; fi; cleanup' EXIT

cp -r "$PEERS" "$work/peers"
chmod -R u+w "$work/peers"

if has vader || has mpitcp; then
	if ! command -v mpirun.openmpi >/dev/null || ! command -v mpicc.openmpi >/dev/null; then
		log "Open MPI (mpirun.openmpi, mpicc.openmpi) not found: vader and mpitcp left out"
		SIDES=$(sed 's/\bvader\b//; s/\bmpitcp\b//' <<<"$SIDES")
	else
		mpicc.openmpi -O2 -o "$work/peers/mpi_coll_bench_ompi" "$work/peers/mpi_coll_bench.c" -lm ||
			die "mpicc.openmpi could not build mpi_coll_bench.c"
	fi
fi
if has gloo && ! "$PYTHON" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
	log "$PYTHON has no torch with Gloo (Debian's python3-torch): gloo left out"
	SIDES=$(sed 's/\bgloo\b//' <<<"$SIDES")
fi
if has iperf && ! command -v iperf3 >/dev/null; then
	log "iperf3 not found: the loopback rate left out"
	SIDES=$(sed 's/\biperf\b//' <<<"$SIDES")
fi

# results: op ranks size side rep time_us
results=$work/results.txt
: >"$results"
iperf_results=$work/iperf.txt
: >"$iperf_results"

# run NAME CMD...: runs one benchmark under the timeout, its stdout to
# $work/NAME.out; stops the script, showing the tail of its stderr, if it
# fails.
run() {
	local name=$1 rc=0
	shift
	echo "$name: $*" >>"$work/commands.txt"
	(cd "$work" && timeout -k 10 "$TIMEOUT" "$@") >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if ((rc != 0)); then
		echo "vs-peers: $name: exit status $rc from: $*" >&2
		tail -15 "$work/$name.err" | sed 's/^/    /' >&2
		exit 1
	fi
}

# ours SIDE OP N SIZE REP: one row of hccl-test.
ours() {
	local side=$1 op=$2 n=$3 size=$4 rep=$5 name="${1}_${2}_n${3}_${4}_r${5}"
	run "$name" "$bin" --backend "$side" -p "$n" --op "$op" -d fp32 -o sum -b "$size" -e "$size" \
		--benchtime "$BENCHTIME" -n 2 -w 5 -c 1 --link-bw 1GB/s --csv -
	awk -F, -v side="$side" -v rep="$rep" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{
			if ($col["wrong"] != "0") { print "wrong " $col["wrong"] > "/dev/stderr"; exit 3 }
			print $col["op"], $col["ranks"], $col["size_bytes"], side, rep, $col["time_us"]; rows++
		}
		END { if (rows != 1) exit 4 }' "$work/$name.out" >>"$results" ||
		die "$name: no single correct row in its CSV ($work/$name.out)"
}

# ompi SIDE N SIZE OPS REP: one mpi_coll_bench run (OPS comma-separated,
# Open MPI's names).
ompi() {
	local side=$1 n=$2 size=$3 ops=$4 rep=$5 name="${1}_n${2}_${3}_r${5}" btl
	btl=(--mca btl self,vader)
	[[ $side == mpitcp ]] && btl=(--mca btl self,tcp --mca btl_tcp_if_include lo)
	run "$name" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$n" --mca pml ob1 "${btl[@]}" \
		-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=17179869184 \
		"$work/peers/mpi_coll_bench_ompi" -b "$size" -e "$size" -t "$secs" -o "$ops" -c 1
	awk -v side="$side" -v rep="$rep" -v n="$n" '
		/^# collective / { op = $3 == "bcast" ? "broadcast" : $3; next }
		/^#/ || NF < 8 { next }
		{
			if ($8 != "0") { print "wrong " $8 > "/dev/stderr"; exit 3 }
			print op, n, $1, side, rep, $5; rows++ # $5: max_us, the slowest rank
		}
		END { if (rows < 1) exit 4 }' "$work/$name.out" >>"$results" ||
		die "$name: no correct rows in its output ($work/$name.out)"
}

# gloo N B E F OPS REP: one gloo_bench.py run.
gloo() {
	local n=$1 b=$2 e=$3 f=$4 ops=$5 rep=$6 name="gloo_n${1}_${2}_r${6}"
	run "$name" "$PYTHON" "$work/peers/gloo_bench.py" -n "$n" -o "$ops" -b "$b" -e "$e" -f "$f" -t "$secs"
	awk -v rep="$rep" '
		/^#/ || NF < 7 { next }
		{
			if ($7 != "0") { print "wrong " $7 > "/dev/stderr"; exit 3 }
			print $1, $2, $3, "gloo", rep, $4; rows++
		}
		END { if (rows < 1) exit 4 }' "$work/$name.out" >>"$results" ||
		die "$name: no correct rows in its output ($work/$name.out)"
}

# iperf P REP: iperf3 over loopback with P streams for 2 s; records GB/s.
iperf() {
	local p=$1 rep=$2 port pid try
	# The server is up once it listens (--forceflush: its own output is
	# buffered until it ends); on a loaded host that took more than the
	# 0.3 s once slept here. A port taken already ends it: another port.
	for try in 1 2 3 4 5; do
		port=$(((RANDOM % 20000) + 30000))
		iperf3 -s -B 127.0.0.1 -p "$port" -1 --forceflush >"$work/iperf_s_P${p}_r${rep}.out" 2>&1 &
		pid=$!
		for _ in $(seq 100); do
			grep -q "listening" "$work/iperf_s_P${p}_r${rep}.out" && break 2
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true # it may have ended already
		wait "$pid" 2>/dev/null || true
		((try < 5)) || die "iperf3 -s did not start listening (tail of its output: $(tail -1 "$work/iperf_s_P${p}_r${rep}.out"))"
	done
	run "iperf_P${p}_r${rep}" iperf3 -c 127.0.0.1 -p "$port" -t 2 -P "$p" -f g
	wait "$pid" 2>/dev/null || true
	awk -v p="$p" -v rep="$rep" '
		/receiver/ && (p == 1 || /SUM/) { for (i = 1; i <= NF; i++) if ($i == "Gbits/sec") { print p, rep, $(i - 1) / 8; exit } }' \
		"$work/iperf_P${p}_r${rep}.out" >>"$iperf_results"
}

# The rows: op ranks size.
ROWS="allreduce:2:1024 allreduce:2:1048576 allreduce:2:67108864
allreduce:8:1024 allreduce:8:1048576 allreduce:8:67108864
allgather:8:67108864 reducescatter:8:67108864 broadcast:8:67108864 alltoall:8:67108864"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)
for rep in $(seq 1 "$REPS"); do
	for n in 2 8; do
		for size in 1024 1048576 67108864; do
			ops=allreduce
			if ((n == 8 && size == 67108864)); then ops=allreduce,allgather,reducescatter,bcast,alltoall; fi
			log "rep $rep/$REPS: $n ranks, $size B: ${ops//,/ }"
			for side in $SIDES; do
				case $side in
				shm | tcp | proc)
					for row in $ROWS; do
						IFS=: read -r op rn rsize <<<"$row"
						if ((rn == n && rsize == size)); then ours "$side" "$op" "$n" "$size" "$rep"; fi
					done
					;;
				vader | mpitcp) ompi "$side" "$n" "$size" "$ops" "$rep" ;;
				esac
			done
		done
		if has gloo; then
			log "rep $rep/$REPS: $n ranks: gloo"
			gloo "$n" 1024 1048576 1024 allreduce "$rep"
			local_ops=allreduce
			if ((n == 8)); then local_ops=allreduce,allgather,broadcast,alltoall; fi
			gloo "$n" 67108864 67108864 2 "$local_ops" "$rep"
		fi
	done
	if has iperf; then
		log "rep $rep/$REPS: iperf3"
		iperf 1 "$rep"
		iperf 2 "$rep"
	fi
done
took=$(($(date +%s) - started))

# --- the table ---------------------------------------------------------------------

mpi_version=$(mpirun.openmpi --version 2>/dev/null | head -1 || echo 'Open MPI: not run')
torch_version=$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo 'not run')
{
	echo "# hccl-test vs its peers, each timed by its own benchmark, side by side in one run; best of $REPS per row and side"
	echo "# host: $(nproc) CPUs; load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg); took ${took}s"
	echo "# $("$bin" --version); $mpi_version; torch $torch_version (Gloo)"
	echo "# shm, proc, tcp: hccl-test --backend shm|proc|tcp -p N --benchtime $BENCHTIME -n 2 -w 5 -c 1 (slowest rank's mean per call)"
	echo "# vader, mpitcp: Open MPI's own collectives in mpi_coll_bench -t $secs under mpirun --mca pml ob1 --mca btl self,vader|self,tcp"
	echo "#   -x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=17179869184 (max_us: slowest rank's mean per call)"
	echo "# gloo: gloo_bench.py -t $secs, torch.distributed over Gloo on CPU, loopback TCP (slowest rank's mean per call; no reducescatter)"
	echo "# ratio = the peer's time / ours: above 1, ours is faster; vader and Gloo's ratios against shm and tcp as named"
	echo "#"
}
sort -k1,1 -k2,2n -k3,3n "$results" | awk -v maxrep="$REPS" -v order="allreduce allgather reducescatter broadcast alltoall" "$AWK_MEDIAN"'
	function label(s) { return s >= 1048576 ? s / 1048576 "M" : s >= 1024 ? s / 1024 "K" : s }
	function t(k, side) { return (k SUBSEP side) in best ? best[k SUBSEP side] : 0 }
	function num(v) { return v > 0 ? sprintf("%10.2f", v) : sprintf("%10s", "-") }
	function ratio(a, b) { return a > 0 && b > 0 ? sprintf("%9.2f", a / b) : sprintf("%9s", "-") }
	{
		# sizes as the peers report them (mpi_coll_bench: whole elements per rank)
		k = $1 SUBSEP $2 SUBSEP label($3)
		if (!(k in seen)) { seen[k] = 1; keys[$1] = keys[$1] " " $2 ":" label($3) }
		kk = k SUBSEP $4
		if (!(kk in best) || $6 + 0 < best[kk]) best[kk] = $6 + 0
		if (!(kk in worst) || $6 + 0 > worst[kk]) worst[kk] = $6 + 0
		rep[kk SUBSEP $5] = $6 + 0
		reps[kk] = reps[kk] " " $6
	}
	# median(k, side): the median of the side'"'"'s repetitions of row k.
	function med(k, side) { return (k SUBSEP side) in reps ? median(reps[k SUBSEP side]) : 0 }
	# paired(k, peer, ours): the medians'"'"' ratio, and in how many of the
	# repetitions that ran both (a repetition runs every side within
	# seconds) ours was the faster.
	function paired(k, peer, ours, r, won, both) {
		if (med(k, peer) <= 0 || med(k, ours) <= 0) return sprintf("%10s", "-")
		for (r = 1; r <= maxrep; r++)
			if ((k SUBSEP peer SUBSEP r) in rep && (k SUBSEP ours SUBSEP r) in rep) {
				both++
				if (rep[k SUBSEP ours SUBSEP r] < rep[k SUBSEP peer SUBSEP r]) won++
			}
		return sprintf("%5.2f %d/%d", med(k, peer) / med(k, ours), won, both)
	}
	function spread(k, side) { return t(k, side) > 0 ? sprintf("%10.2f", worst[k SUBSEP side] / t(k, side)) : sprintf("%10s", "-") }
	END {
		printf "%-13s %5s %5s | %10s %10s %10s %10s %10s %10s | %9s %10s %9s %9s %9s %9s %9s\n", "op", "ranks", "size",
			"shm", "proc", "vader", "tcp", "mpitcp", "gloo", "vader/shm", "vader/proc", "shm/proc", "ompi/tcp", "gloo/tcp", "gloo/shm", "gloo/proc"
		printf "%-13s %5s %5s | %10s %10s %10s %10s %10s %10s | %9s %10s %9s %9s %9s %9s %9s\n", "", "", "", "(us)", "(us)", "(us)", "(us)", "(us)", "(us)", "", "", "", "", "", "", ""
		n = split(order, ops, " ")
		for (o = 1; o <= n; o++) {
			op = ops[o]
			m = split(keys[op], rows, " ")
			for (r = 1; r <= m; r++) {
				split(rows[r], p, ":")
				k = op SUBSEP p[1] SUBSEP p[2]
				printf "%-13s %5d %5s | %s %s %s %s %s %s | %s %10s %s %s %s %s %s\n", op, p[1], p[2],
					num(t(k, "shm")), num(t(k, "proc")), num(t(k, "vader")), num(t(k, "tcp")), num(t(k, "mpitcp")), num(t(k, "gloo")),
					ratio(t(k, "vader"), t(k, "shm")), ratio(t(k, "vader"), t(k, "proc")), ratio(t(k, "shm"), t(k, "proc")),
					ratio(t(k, "mpitcp"), t(k, "tcp")), ratio(t(k, "gloo"), t(k, "tcp")), ratio(t(k, "gloo"), t(k, "shm")),
					ratio(t(k, "gloo"), t(k, "proc"))
				# How far apart the repetitions of each side were: a
				# ratio within both sides spreads says less than it seems.
				spreads = spreads sprintf("# %-13s %3d %5s | %s %s %s %s %s %s |\n", op, p[1], p[2],
					spread(k, "shm"), spread(k, "proc"), spread(k, "vader"), spread(k, "tcp"), spread(k, "mpitcp"), spread(k, "gloo"))
				pairs = pairs sprintf("# %-13s %3d %5s | %10s %10s %10s %10s %10s |\n", op, p[1], p[2],
					paired(k, "vader", "shm"), paired(k, "vader", "proc"), paired(k, "shm", "proc"), paired(k, "mpitcp", "tcp"), paired(k, "gloo", "tcp"))
			}
		}
		printf "#\n# spread: the slowest repetition of each side / its fastest, per row (1.00: every repetition alike)\n%s", spreads
		# Best-of favours the side whose repetitions spread the wider;
		# the medians and the repetitions side by side do not.
		printf "#\n# medians: the peer'"'"'s median / ours, and in how many repetitions ours was the faster (each runs every side within seconds)\n"
		printf "# %-13s %3s %5s | %10s %10s %10s %10s %10s |\n", "", "", "", "vader/shm", "vader/proc", "shm/proc", "ompi/tcp", "gloo/tcp"
		printf "%s", pairs
	}'
if [[ -s $iperf_results ]]; then
	awk -v reps="$REPS" '
		{ if (!($1 in best) || $3 > best[$1]) best[$1] = $3; all[$1] = all[$1] " " sprintf("%.2f", $3) }
		END {
			printf "#\n# loopback copy rate, iperf3 -c 127.0.0.1 -t 2 (receiver; best of %d; all reps in GB/s):\n", reps
			for (p = 1; p <= 2; p++) if (p in best) printf "#   %d stream%s: %.2f GB/s (%s)\n", p, (p > 1 ? "s" : ""), best[p], substr(all[p], 2)
			print "#   a tcp allreduce of S bytes at 2 ranks moves S bytes each way through the stack: its floor is about S / (2-stream rate) per direction pair"
		}' "$iperf_results"
fi

if [[ $IN_HARNESS == 1 ]]; then
	echo "#"
	echo "# --- a different question: Open MPI's collectives called from inside hccl-test (--backend mpi --algo native),"
	echo "# --- the same harness timing both sides (scripts/vs-mpi.sh; fixed iteration counts, not --benchtime) ---"
	REPS=$REPS HCCL_TEST='' "$repo/scripts/vs-mpi.sh"
fi
ok=1
