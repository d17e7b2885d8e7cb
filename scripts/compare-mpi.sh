#!/usr/bin/env bash
# Measures allreduce (fp32, sum) at 1 KiB, 1 MiB and 64 MiB with Open MPI over
# TCP and with hccl-test's tcp backend, side by side in one run, and prints one
# table with both times and bus bandwidths, their ratios, and a verdict per row
# against the targets: at 1 MiB and 64 MiB our busbw >= Open MPI's; at 1 KiB
# our time <= Open MPI's.
#
#   scripts/compare-mpi.sh
#   RANKS="2 4 8" REPS=5 scripts/compare-mpi.sh
#   HCCL_TEST=./hccl-test MPIRUN_ARGS="--bind-to none" scripts/compare-mpi.sh
#   BACKEND=shm RANKS=2 REPS=1 scripts/compare-mpi.sh      # exercise the script on another backend
#
# Env knobs:
#   RANKS        rank counts to compare (default "2 8"), each >= 2
#   REPS         repetitions per rank count (default 3); each repetition runs
#                Open MPI then hccl-test, and the table keeps, per row and per
#                side, the repetition with the lowest time
#   HCCL_TEST    an existing hccl-test binary to use instead of building one
#   MPIRUN_ARGS  extra mpirun arguments, split on spaces, added before the program
#   BACKEND      hccl-test --backend (default tcp)
#   OURS_ITERS   SIZE:ITERS pairs, hccl-test's timed iterations per compared size
#                (default "1024:1000 1048576:100 67108864:20")
#   TIMEOUT      seconds one mpirun or hccl-test run may take (default 900)
#   QUIET_WAIT   before each run, wait up to this many seconds (default 20) for
#                other processes to use less than 15% of the CPUs; 0 skips it
#   KEEP         1 keeps the scratch directory with the raw outputs (it is always
#                kept when something fails)
#
# Needs Open MPI (mpicc/mpirun; when missing and run as root on Debian it runs
# apt-get install openmpi-bin libopenmpi-dev), a C compiler, and Go unless
# HCCL_TEST is given. The MPI program is ../shared/peers/mpi_coll_bench.c
# relative to the repository; that folder is copied to a scratch directory and
# built there. Progress goes to stderr, the table to stdout.
#
# How the two sides are measured:
#   Open MPI: mpirun --allow-run-as-root --oversubscribe -np N
#               --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo
#               -x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=17179869184
#               mpi_coll_bench -o allreduce -b 1K -e 64M -f 4
#             (TCP only, also between ranks of one machine; the two -x keep
#             glibc from serving Open MPI's large temporary buffers with fresh
#             mmap'd pages, whose first touch dominates 64 MiB otherwise)
#   ours:     hccl-test --backend tcp -p N --op allreduce -d fp32 -b SIZE -e SIZE
#               -n ITERS -w 5 --link-bw 1GB/s, once per compared size, with the
#               iterations of OURS_ITERS (about as many as Open MPI's side times)
#   Both sweep 1K..64M by 4 (a factor that lands on 1 KiB, 1 MiB and 64 MiB);
#   only those three rows are compared. Time is the slowest rank's mean time
#   per call on both sides (mpi_coll_bench's max_us column, hccl-test's time
#   column). busbw is computed from that time for both: size / time x 2(n-1)/n,
#   so the busbw ratio equals the time ratio.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
peers="$repo/../shared/peers"

RANKS=${RANKS:-"2 8"}
REPS=${REPS:-3}
BACKEND=${BACKEND:-tcp}
TIMEOUT=${TIMEOUT:-900}
KEEP=${KEEP:-0}
QUIET_WAIT=${QUIET_WAIT:-20}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
HCCL_TEST=${HCCL_TEST:-}

SIZES="1024 1048576 67108864"        # rows compared
SWEEP=(-b 1K -e 64M -f 4)            # Open MPI's sweep
# hccl-test's timed iterations per compared size: about what mpi_coll_bench's
# 0.3 s target picks for each (it times a loop of ~0.3 s per size).
OURS_ITERS=${OURS_ITERS:-"1024:1000 1048576:100 67108864:20"}
MALLOC_FIX=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=17179869184)
TCP_ONLY=(--mca pml ob1 --mca btl 'self,tcp' --mca btl_tcp_if_include lo)

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "compare-mpi: $*" >&2; exit 1; }

for n in $RANKS; do
	if ! [[ $n =~ ^[1-9][0-9]*$ ]] || ((n < 2)); then die "RANKS: '$n' is not a rank count of at least 2"; fi
done
[[ -n ${RANKS// /} ]] || die "RANKS is empty"
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS: '$REPS' is not a positive integer"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "TIMEOUT: '$TIMEOUT' is not a positive number of seconds"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT: '$QUIET_WAIT' is not a number of seconds"
read -r -a extra_mpirun <<<"$MPIRUN_ARGS"
if [[ -n $HCCL_TEST ]] && ! [[ -x $HCCL_TEST && -f $HCCL_TEST ]]; then die "HCCL_TEST=$HCCL_TEST is not an executable file"; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-mpi.XXXXXX")
ok=0
cleanup() {
	if [[ $ok == 1 && $KEEP != 1 ]]; then
		rm -rf "$tmp"
	else
		echo "compare-mpi: raw outputs kept in $tmp" >&2
	fi
}
trap cleanup EXIT

# --- Open MPI ---------------------------------------------------------------

# find_ompi sets MPICC and MPIRUN to Open MPI's (the .openmpi names first:
# with MPICH also installed, plain mpicc/mpirun may be MPICH's).
find_ompi() {
	MPICC='' MPIRUN=''
	if command -v mpicc.openmpi >/dev/null; then
		MPICC=mpicc.openmpi
	elif command -v mpicc >/dev/null && mpicc --showme:version 2>/dev/null | grep -q 'Open MPI'; then
		MPICC=mpicc
	fi
	if command -v mpirun.openmpi >/dev/null; then
		MPIRUN=mpirun.openmpi
	elif command -v mpirun >/dev/null && mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
		MPIRUN=mpirun
	fi
	[[ -n $MPICC && -n $MPIRUN ]]
}

if ! find_ompi || ! command -v cc >/dev/null; then
	[[ $(id -u) == 0 ]] || die "Open MPI (mpicc, mpirun) or a C compiler is missing; install openmpi-bin libopenmpi-dev, or run this as root to have it done"
	command -v apt-get >/dev/null || die "Open MPI is missing and there is no apt-get to install it"
	pkgs=(openmpi-bin libopenmpi-dev)
	command -v cc >/dev/null || pkgs+=(gcc libc6-dev)
	log "installing ${pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >"$tmp/apt.log" 2>&1 || { tail -20 "$tmp/apt.log" >&2; die "apt-get update failed"; }
	apt-get install -y "${pkgs[@]}" >>"$tmp/apt.log" 2>&1 || { tail -20 "$tmp/apt.log" >&2; die "apt-get install ${pkgs[*]} failed"; }
	find_ompi || die "Open MPI still not found after installing ${pkgs[*]}"
fi
command -v timeout >/dev/null || die "timeout (coreutils) is missing"

[[ -f $peers/mpi_coll_bench.c ]] || die "$peers/mpi_coll_bench.c not found (expected next to the repository, in ../shared/peers)"
cp -r "$peers" "$tmp/peers"
log "building mpi_coll_bench with $MPICC"
"$MPICC" -O2 -o "$tmp/mpi_coll_bench" "$tmp/peers/mpi_coll_bench.c" -lm >"$tmp/mpicc.log" 2>&1 ||
	{ cat "$tmp/mpicc.log" >&2; die "$MPICC failed to build mpi_coll_bench.c"; }

# --- hccl-test ----------------------------------------------------------------

if [[ -n $HCCL_TEST ]]; then
	hccl=$(cd "$(dirname "$HCCL_TEST")" && pwd)/$(basename "$HCCL_TEST")
else
	command -v go >/dev/null || die "go is not on PATH (set HCCL_TEST to an hccl-test binary instead)"
	log "building hccl-test"
	(cd "$repo" && go build -o "$tmp/hccl-test" ./cmd/hccl-test) >"$tmp/go-build.log" 2>&1 ||
		{ cat "$tmp/go-build.log" >&2; die "go build ./cmd/hccl-test failed"; }
	hccl=$tmp/hccl-test
fi

# --- runs -----------------------------------------------------------------------

# cpu_share: the fraction of all CPUs busy over the next second (this script
# sleeps meanwhile, so it is other processes' share).
cpu_share() {
	local a b
	a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat)
	sleep 1
	b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN{split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; printf "%.2f", (t > 0 ? (y[1] - x[1]) / t : 0)}'
}

# quiet WHAT: waits (at most QUIET_WAIT seconds) for the machine to be nearly
# idle and prints a note with the CPU share others used just before the run;
# runs that start on a busy machine are listed in the table's header.
quiet() {
	((QUIET_WAIT > 0)) && [[ -r /proc/stat ]] || return 0
	local waited=1 share
	share=$(cpu_share)
	while awk -v s="$share" 'BEGIN{exit !(s > 0.15)}' && ((waited < QUIET_WAIT)); do
		share=$(cpu_share)
		waited=$((waited + 1))
	done
	echo " (others' CPU share before: $share)"
	if awk -v s="$share" 'BEGIN{exit !(s > 0.15)}'; then echo "$1 ($share)" >>"$tmp/busy.txt"; fi
}

# results: one line per measured row: side ranks size time_us rep
results=$tmp/results.txt
: >"$results"

exit_meaning() { # program status
	case $1:$2 in
	*:124 | *:137) echo "killed after TIMEOUT=${TIMEOUT}s" ;;
	hccl-test:1) echo "the run failed" ;;
	hccl-test:2) echo "bad flags or values, nothing was run" ;;
	hccl-test:3) echo "some elements were wrong" ;;
	hccl-test:130) echo "interrupted" ;;
	*) echo "see its output below" ;;
	esac
}

# fail_run NAME LOG RC CMD...: explains a failed run and stops.
fail_run() {
	local name=$1 out=$2 rc=$3
	shift 3
	{
		echo "compare-mpi: $name exited with status $rc ($(exit_meaning "$name" "$rc"))"
		echo "  command: $*"
		echo "  last lines of its output ($out):"
		tail -15 "$out" | sed 's/^/    /'
	} >&2
	exit 1
}

# check_rows SIDE N FILE: every compared size must be there exactly once.
check_rows() {
	local side=$1 n=$2 f=$3 s c
	for s in $SIZES; do
		c=$(awk -v s="$s" '$1 == s' "$f" | wc -l)
		[[ $c == 1 ]] || die "$side at $n ranks: expected one row of $s bytes in its output, found $c (see $f)"
	done
}

run_mpi() { # n rep
	local n=$1 rep=$2 out="$tmp/mpi_n$1_r$2.txt" rows="$tmp/mpi_n$1_r$2.rows" rc=0
	local cmd=("$MPIRUN" --allow-run-as-root --oversubscribe -np "$n" "${TCP_ONLY[@]}" "${MALLOC_FIX[@]}"
		${extra_mpirun[@]+"${extra_mpirun[@]}"} "$tmp/mpi_coll_bench" -o allreduce "${SWEEP[@]}")
	log "Open MPI tcp, $n ranks, repetition $rep$(quiet "Open MPI $n ranks rep $rep")"
	echo "${cmd[*]}" >"$tmp/mpi.cmd"
	(cd "$tmp" && timeout -k 10 "$TIMEOUT" "${cmd[@]}") >"$out" 2>&1 || rc=$?
	((rc == 0)) || fail_run "mpirun" "$out" "$rc" "${cmd[@]}"
	# rows after "# collective allreduce": size count iters time_us max_us algbw busbw wrong
	awk '/^# collective /{ar = ($3 == "allreduce"); next}
		ar && $1 ~ /^[0-9]+$/ && NF == 8 {print}' "$out" >"$rows"
	check_rows "Open MPI" "$n" "$rows"
	awk -v n="$n" -v rep="$rep" -v sizes="$SIZES" 'BEGIN{split(sizes, a, " "); for (i in a) want[a[i]] = 1}
		$1 in want {if ($8 != 0) exit 1; print "mpi", n, $1, $5, rep}' "$rows" >>"$results" ||
		die "Open MPI at $n ranks reported wrong elements (see $out)"
}

run_ours() { # n rep
	local n=$1 rep=$2 out="$tmp/ours_n$1_r$2.txt" rows="$tmp/ours_n$1_r$2.rows" rc=0
	log "hccl-test $BACKEND, $n ranks, repetition $rep$(quiet "hccl-test $n ranks rep $rep")"
	: >"$out"
	: >"$tmp/ours.cmd"
	# One run per size, each with about as many timed iterations as
	# mpi_coll_bench's time target gives that size (OURS_ITERS), so both
	# sides average over comparable spans.
	local pair size iters
	for pair in $OURS_ITERS; do
		size=${pair%%:*} iters=${pair##*:}
		local cmd=("$hccl" --backend "$BACKEND" -p "$n" --op allreduce -d fp32 -b "$size" -e "$size" -n "$iters" -w 5 --link-bw 1GB/s)
		echo "${cmd[*]}" >>"$tmp/ours.cmd"
		(cd "$tmp" && timeout -k 10 "$TIMEOUT" "${cmd[@]}") >>"$out" 2>&1 || rc=$?
		((rc == 0)) || fail_run "hccl-test" "$out" "$rc" "${cmd[@]}"
	done
	# table rows: size count type redop root algo time algbw busbw util #wrong
	awk '!/^#/ && NF == 11 && $1 ~ /^[0-9]+$/ && $3 == "fp32"' "$out" >"$rows"
	check_rows "hccl-test" "$n" "$rows"
	awk -v n="$n" -v rep="$rep" -v sizes="$SIZES" 'BEGIN{split(sizes, a, " "); for (i in a) want[a[i]] = 1}
		$1 in want {if ($11 != 0) exit 1; print "ours", n, $1, $7, rep}' "$rows" >>"$results" ||
		die "hccl-test at $n ranks reported wrong elements (see $out)"
}

for n in $RANKS; do
	for rep in $(seq 1 "$REPS"); do
		run_mpi "$n" "$rep"
		run_ours "$n" "$rep"
	done
done

# --- table ------------------------------------------------------------------------

{
	echo "# allreduce fp32 sum: Open MPI over TCP vs hccl-test --backend $BACKEND, best of $REPS repetition(s) per row, interleaved"
	lib=$(sed -n 's/^# library: \([^,]*\).*/\1/p' "$tmp/mpi_n${RANKS%% *}_r1.txt" | head -1)
	echo "# host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?');  ${lib:-Open MPI};  $("$hccl" --version 2>/dev/null || echo hccl-test)"
	echo "# MPI:  $(sed "s|$tmp/||g" "$tmp/mpi.cmd")  (-np per row)"
	echo "# ours: $(sed "s|$tmp/||g; s|$repo/||g" "$tmp/ours.cmd" | paste -sd ";" -)  (-p per row)"
	echo "# time: slowest rank's mean per call (mpi_coll_bench max_us, hccl-test time); busbw = size / time x 2(n-1)/n for both"
	echo "# ratios > 1 mean hccl-test is better: time MPI/ours, busbw ours/MPI"
	if [[ -s $tmp/busy.txt ]]; then
		echo "# started while other processes used more than 15% of the CPUs (compare with care): $(paste -sd, "$tmp/busy.txt" | sed 's/,/, /g')"
	fi
	echo "#"
}
awk '
	function label(s) { return s >= 1048576 ? s / 1048576 " MiB" : s >= 1024 ? s / 1024 " KiB" : s " B" }
	{
		k = $2 SUBSEP $3
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		if (!(($1, k) in best) || $4 < best[$1, k]) best[$1, k] = $4
	}
	END {
		printf "%5s %8s %12s %12s %9s %11s %11s %9s\n", "ranks", "size", "MPI time", "ours time", "time", "MPI busbw", "ours busbw", "busbw"
		printf "%5s %8s %12s %12s %9s %11s %11s %9s\n", "", "", "(us)", "(us)", "MPI/ours", "(GB/s)", "(GB/s)", "ours/MPI"
		met = 0
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, p, SUBSEP); n = p[1]; s = p[2]
			tm = best["mpi", k]; to = best["ours", k]
			f = 2 * (n - 1) / n
			bm = s / tm / 1000 * f; bo = s / to / 1000 * f
			printf "%5d %8s %12.2f %12.2f %9.2f %11.3f %11.3f %9.2f\n", n, label(s), tm, to, tm / to, bm, bo, bo / bm
			if (s == 1024) {
				ok = to <= tm
				v[i] = sprintf("verdict %d ranks %-7s target ours time <= MPI time:   %.2f us vs %.2f us  -> %s", n, label(s), to, tm, ok ? "met" : "MISSED")
			} else {
				ok = bo >= bm
				v[i] = sprintf("verdict %d ranks %-7s target ours busbw >= MPI busbw: %.3f vs %.3f GB/s -> %s", n, label(s), bo, bm, ok ? "met" : "MISSED")
			}
			met += ok
		}
		print "#"
		for (i = 1; i <= nk; i++) print v[i]
		printf "# targets met: %d of %d\n", met, nk
	}' "$results"
ok=1
