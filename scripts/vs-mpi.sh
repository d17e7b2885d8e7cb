#!/usr/bin/env bash
# Puts hccl-test's own collectives next to Open MPI's, all timed and checked
# by the same hccl-test binary (built with -tags mpi), and prints one table
# per collective with the ratios ours/MPI:
#
#   ours, shared memory:  hccl-test --backend shm -p N                (ranks are goroutines)
#   ours, TCP:            hccl-test --backend tcp -p N                (ranks are processes, loopback)
#   ours, processes sharing memory: hccl-test --backend proc -p N     (ranks are processes, memfd)
#   MPI, shared memory:   mpirun --mca btl self,vader hccl-test --backend mpi --algo native
#   MPI, TCP:             mpirun --mca btl self,tcp   hccl-test --backend mpi --algo native
#
# Rows: fp32 allreduce (sum) at 2 and 8 ranks for 1 KiB, 1 MiB and 64 MiB;
# allgather, reducescatter, broadcast and alltoall at 8 ranks for 64 MiB.
# Ratios compare like with like, shm and proc with vader and tcp with Open MPI's tcp:
# MPI's time / our time, which is also our busbw / MPI's busbw; above 1 means
# ours is faster.
#
# This answers how our algorithms compare with Open MPI's inside one
# harness. Which tool is faster as each is measured by its users (Open MPI's
# own benchmark, Gloo's, iperf3) is scripts/vs-peers.sh's question.
#
#   scripts/vs-mpi.sh
#   REPS=3 scripts/vs-mpi.sh                 # best of 3 per row and side
#   HCCL_TEST=/tmp/hccl-test-mpi scripts/vs-mpi.sh
#
# Env knobs:
#   REPS        repetitions (default 1); each runs every row on all four sides
#               in turn, and the table keeps per row and side the lowest time
#               (PICK=median keeps the median instead)
#   PICK        best (default) or median
#   ITERS       SIZE:ITERS:WARMUP triples, timed and untimed iterations per size
#               (default "1024:2000:200 1048576:20:3 67108864:3:1": a 1 KiB
#               row of 200 calls lasts about a millisecond, which one
#               scheduler tick of another process on a 2-core machine
#               doubles)
#   MPI_COLL    blocking (default) or nonblocking: MPI's collectives as MPI
#               programs call them (MPI_Allreduce, Open MPI's tuned algorithms),
#               or the MPI-3 nonblocking ones (MPI_Iallreduce, libnbc) that
#               --timeout can interrupt (HCCL_TEST_MPI_COLL)
#   ALGO        our --algo (default auto)
#   HCCL_TEST   an hccl-test binary built with -tags mpi, instead of building one
#   MPIRUN_ARGS extra mpirun arguments, split on spaces
#   TIMEOUT     seconds one run may take (default 600)
#   KEEP        1 keeps the scratch directory with the raw CSV (always kept on
#               failure)
#
# Needs Open MPI (openmpi-bin, and libopenmpi-dev to build; as root on Debian
# the script installs them) and Go unless HCCL_TEST is given. Every run checks
# its result (-c 1, outside the timed region); a wrong element stops the
# script. Progress goes to stderr, the tables to stdout.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)

REPS=${REPS:-1}
PICK=${PICK:-best}
ITERS=${ITERS:-"1024:2000:200 1048576:20:3 67108864:3:1"}
MPI_COLL=${MPI_COLL:-blocking}
ALGO=${ALGO:-auto}
HCCL_TEST=${HCCL_TEST:-}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
TIMEOUT=${TIMEOUT:-600}
KEEP=${KEEP:-0}

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "vs-mpi: $*" >&2; exit 1; }

[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS: '$REPS' is not a positive integer"
[[ $PICK == best || $PICK == median ]] || die "PICK: '$PICK' is not best or median"
[[ $MPI_COLL == blocking || $MPI_COLL == nonblocking ]] || die "MPI_COLL: '$MPI_COLL' is not blocking or nonblocking"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "TIMEOUT: '$TIMEOUT' is not a positive number of seconds"
for t in $ITERS; do
	[[ $t =~ ^[0-9]+:[1-9][0-9]*:[0-9]+$ ]] || die "ITERS: '$t' is not SIZE:ITERS:WARMUP"
done
read -r -a extra_mpirun <<<"$MPIRUN_ARGS"

# The rows: op ranks size.
ROWS="allreduce:2:1024 allreduce:2:1048576 allreduce:2:67108864
allreduce:8:1024 allreduce:8:1048576 allreduce:8:67108864
allgather:8:67108864 reducescatter:8:67108864 broadcast:8:67108864 alltoall:8:67108864"
SIDES="shm proc vader tcp mpitcp"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs-mpi.XXXXXX")
ok=0
cleanup() {
	if [[ $ok == 1 && $KEEP != 1 ]]; then
		rm -rf "$tmp"
	else
		echo "vs-mpi: raw outputs kept in $tmp" >&2
	fi
}
trap cleanup EXIT

# --- Open MPI and the binary ----------------------------------------------------

# find_mpirun sets MPIRUN to Open MPI's (mpirun.openmpi first: with MPICH also
# installed, plain mpirun may be MPICH's).
find_mpirun() {
	MPIRUN=''
	if command -v mpirun.openmpi >/dev/null; then
		MPIRUN=mpirun.openmpi
	elif command -v mpirun >/dev/null && mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
		MPIRUN=mpirun
	fi
	[[ -n $MPIRUN ]]
}
have_headers() { [[ -n $HCCL_TEST ]] || pkg-config --exists ompi-c 2>/dev/null; }

if ! find_mpirun || ! have_headers; then
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		die "Open MPI is missing: install openmpi-bin and libopenmpi-dev (or run this as root on Debian to have it done)"
	fi
	log "installing openmpi-bin libopenmpi-dev"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update && apt-get install -y openmpi-bin libopenmpi-dev pkg-config; } >"$tmp/apt.log" 2>&1 ||
		{ tail -20 "$tmp/apt.log" >&2; die "apt-get install openmpi-bin libopenmpi-dev failed"; }
	find_mpirun || die "Open MPI's mpirun still not found"
fi
command -v timeout >/dev/null || die "timeout (coreutils) is missing"

if [[ -n $HCCL_TEST ]]; then
	[[ -x $HCCL_TEST && -f $HCCL_TEST ]] || die "HCCL_TEST=$HCCL_TEST is not an executable file"
	bin=$(cd "$(dirname "$HCCL_TEST")" && pwd)/$(basename "$HCCL_TEST")
else
	command -v go >/dev/null || die "go is not on PATH (set HCCL_TEST to an hccl-test built with -tags mpi)"
	log "building hccl-test with -tags mpi"
	(cd "$repo" && go build -tags mpi -o "$tmp/hccl-test" ./cmd/hccl-test) >"$tmp/go-build.log" 2>&1 ||
		{ cat "$tmp/go-build.log" >&2; die "go build -tags mpi ./cmd/hccl-test failed"; }
	bin=$tmp/hccl-test
fi
"$bin" --backend mpi -p 1 --dry-run >/dev/null 2>&1 || die "$bin has no mpi backend: build it with go build -tags mpi ./cmd/hccl-test"

# --- runs -------------------------------------------------------------------------

# iters_for SIZE prints "ITERS WARMUP" for a size: the entry of ITERS with
# the largest size not above it.
iters_for() {
	local best='' t s
	for t in $ITERS; do
		s=${t%%:*}
		if ((s <= $1)); then best=$t; fi
	done
	[[ -n $best ]] || best=${ITERS%% *}
	best=${best#*:}
	echo "${best%%:*} ${best#*:}"
}

# results: op ranks size side rep time_us busbw algo
results=$tmp/results.txt
: >"$results"

# run_side OP N SIZE SIDE REP: one run of hccl-test, its CSV appended to
# results.
run_side() {
	local op=$1 n=$2 size=$3 side=$4 rep=$5 iters warm rc=0
	read -r iters warm <<<"$(iters_for "$size")"
	local out="$tmp/${op}_n${n}_${size}_${side}_r${rep}.csv"
	local flags=(--op "$op" -d fp32 -o sum -b "$size" -e "$size" -n "$iters" -w "$warm" -c 1 --link-bw 1GB/s --csv -)
	local mpi=("$MPIRUN" --oversubscribe --allow-run-as-root -np "$n" --mca pml ob1
		-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=17179869184 -x HCCL_TEST_MPI_COLL="$MPI_COLL")
	local cmd
	case $side in
	shm) cmd=("$bin" --backend shm -p "$n" --algo "$ALGO") ;;
	tcp) cmd=("$bin" --backend tcp -p "$n" --algo "$ALGO") ;;
	proc) cmd=("$bin" --backend proc -p "$n" --algo "$ALGO") ;;
	vader) cmd=("${mpi[@]}" --mca btl 'self,vader' ${extra_mpirun[@]+"${extra_mpirun[@]}"} "$bin" --backend mpi --algo native) ;;
	mpitcp) cmd=("${mpi[@]}" --mca btl 'self,tcp' --mca btl_tcp_if_include lo ${extra_mpirun[@]+"${extra_mpirun[@]}"}
		"$bin" --backend mpi --algo native) ;;
	esac
	echo "$side: ${cmd[*]} ${flags[*]}" >>"$tmp/commands.txt"
	(cd "$tmp" && timeout -k 10 "$TIMEOUT" "${cmd[@]}" "${flags[@]}") >"$out" 2>"$out.err" || rc=$?
	if ((rc != 0)); then
		{
			echo "vs-mpi: $side $op at $n ranks, $size B: exit status $rc"
			echo "  command: ${cmd[*]} ${flags[*]}"
			tail -15 "$out.err" | sed 's/^/    /'
		} >&2
		exit 1
	fi
	# Columns by name from the CSV header; the one data row.
	awk -F, -v op="$op" -v n="$n" -v size="$size" -v side="$side" -v rep="$rep" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["op"] == op {
			if ($col["wrong"] != "0") { print "wrong " $col["wrong"] > "/dev/stderr"; exit 3 }
			print op, n, $col["size_bytes"], side, rep, $col["time_us"], $col["busbw_GBps"], $col["algo"]; rows++
		}
		END { if (rows != 1) exit 4 }' "$out" >>"$results" ||
		die "$side $op at $n ranks, $size B: no single correct row in its CSV output ($out)"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
started=$(date +%s)
for rep in $(seq 1 "$REPS"); do
	for row in $ROWS; do
		IFS=: read -r op n size <<<"$row"
		log "rep $rep/$REPS: $op, $n ranks, $size B"
		for side in $SIDES; do
			run_side "$op" "$n" "$size" "$side" "$rep"
		done
	done
done
took=$(($(date +%s) - started))

# --- tables ---------------------------------------------------------------------

{
	echo "# hccl-test vs Open MPI: fp32, sum; $PICK of $REPS repetition(s) per row and side; each side checked (0 wrong)"
	echo "# host: $(nproc) CPUs; load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); took ${took}s"
	echo "# $("$bin" --version);  $("$MPIRUN" --version 2>/dev/null | head -1)"
	echo "# shm, proc, tcp: our algorithms (--algo $ALGO; the algo column is what ran); vader, mpitcp: Open MPI's $MPI_COLL collectives (--algo native)"
	echo "# time: slowest rank's mean per call (us); busbw in GB/s; ratio = MPI time / our time (> 1: ours is faster)"
}
sort -k1,1 -k2,2n -k3,3n "$results" | awk -v pick="$PICK" -v order="allreduce allgather reducescatter broadcast alltoall" '
	function label(s) { return s >= 1048576 ? s / 1048576 "M" : s >= 1024 ? s / 1024 "K" : s }
	function choose(key,   m, a, i, j, t) {
		m = split(times[key], a, " ")
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return pick == "best" ? a[1] : a[int((m + 1) / 2)]
	}
	{
		k = $1 SUBSEP $2 SUBSEP $3
		if (!(k in seen)) { seen[k] = 1; keys[$1] = keys[$1] " " $2 ":" $3 }
		times[k SUBSEP $4] = times[k SUBSEP $4] " " $6
		prod[k SUBSEP $4] = $7 * $6 # busbw x time: the same for every repetition
		algo[k SUBSEP $4] = $8
	}
	END {
		n = split(order, ops, " ")
		for (o = 1; o <= n; o++) {
			op = ops[o]
			if (!(op in keys)) continue
			printf "#\n# %s\n", op
			printf "%5s %6s | %10s %10s %10s %10s %10s | %7s %7s %7s %7s %7s | %9s %10s %9s | %s\n", "ranks", "size", "shm", "proc", "vader", "tcp", "mpitcp",
				"shm", "proc", "vader", "tcp", "mpitcp", "shm/vader", "proc/vader", "tcp/tcp", "our algo (shm, proc, tcp)"
			printf "%5s %6s | %10s %10s %10s %10s %10s | %7s %7s %7s %7s %7s | %9s %10s %9s |\n", "", "(B)", "(us)", "(us)", "(us)", "(us)", "(us)",
				"(GB/s)", "(GB/s)", "(GB/s)", "(GB/s)", "(GB/s)", "", "", ""
			m = split(keys[op], rows, " ")
			for (r = 1; r <= m; r++) {
				split(rows[r], p, ":")
				k = op SUBSEP p[1] SUBSEP p[2]
				for (s = 1; s <= 5; s++) {
					side = s == 1 ? "shm" : s == 2 ? "proc" : s == 3 ? "vader" : s == 4 ? "tcp" : "mpitcp"
					t[side] = choose(k SUBSEP side)
					bw[side] = t[side] > 0 ? prod[k SUBSEP side] / t[side] : 0
				}
				printf "%5d %6s | %10.2f %10.2f %10.2f %10.2f %10.2f | %7.3f %7.3f %7.3f %7.3f %7.3f | %9.2f %10.2f %9.2f | %s, %s, %s\n",
					p[1], label(p[2]), t["shm"], t["proc"], t["vader"], t["tcp"], t["mpitcp"],
					bw["shm"], bw["proc"], bw["vader"], bw["tcp"], bw["mpitcp"],
					t["vader"] / t["shm"], t["vader"] / t["proc"], t["mpitcp"] / t["tcp"], algo[k SUBSEP "shm"], algo[k SUBSEP "proc"], algo[k SUBSEP "tcp"]
			}
		}
	}'
ok=1
