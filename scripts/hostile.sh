#!/usr/bin/env bash
# Runs hccl-test as a hostile user would and tables, for each command, the
# exit code, the wall time and the peak resident memory of the process
# (GNU time's maximum RSS; for tcp runs, of the largest process: the parent
# or one of its children, as wait4 reports the largest child).
#
#   scripts/hostile.sh                       # builds ./cmd/hccl-test
#   HCCL_TEST=/path/to/hccl-test scripts/hostile.sh
#
# Each command runs under a time limit (LIMIT seconds, default 90) and a cap
# on its address space (CAP_KB, default 8000000: 8 GB), so that a command
# that would eat the machine ends at the cap instead ("killed at cap" or
# Go's out-of-memory exit). Signals are sent to the hccl-test process itself
# after the delay the row gives. The tables are markdown, on stdout, one
# per block of cases; "rows kept" counts the data lines of the row's --csv
# file after the command (- where it has none that is a regular file) and,
# where stdout is a file, the table's measured lines there; "trace" says
# whether stderr held a Go stack trace or runtime error. With KEEP=DIR each
# row's stderr is kept in DIR/NNN.err and its stdout, where a file, in
# DIR/NNN.out. PORT (default 29517) and the one above it are the ports of the
# rows that start two ranks by hand, so that two copies of this script can
# run at once. ONLY=REGEX runs only the rows whose names match it (the
# numbers of their KEEP files stay those of the whole script).
set -uo pipefail
cd "$(dirname "$0")/.."

LIMIT=${LIMIT:-90}
port=${PORT:-29517}
CAP_KB=${CAP_KB:-8000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A copy of its own, so that the signals below find this script's process
# by its path and no other.
bin=$work/hccl-test
if [ -n "${HCCL_TEST:-}" ]; then
	cp "$HCCL_TEST" "$bin" || exit 1
else
	go build -o "$bin" ./cmd/hccl-test || exit 1
fi

# Inputs some rows read: two small CSV runs of different collectives, so a
# comparison of them has no row in common.
"$bin" --op allreduce -b 1K -e 4K -n 2 -w 0 --csv "$work/a.csv" >/dev/null 2>&1
"$bin" --op allgather -b 1K -e 4K -n 2 -w 0 --csv "$work/b.csv" >/dev/null 2>&1
cp "$work/a.csv" "$work/in.svg"
mkfifo "$work/fifo"

# wanted NAME...: whether ONLY (an extended regular expression; unset for
# every row) picks a row of one of these names.
wanted() {
	[ -z "${ONLY:-}" ] && return 0
	local n
	for n in "$@"; do
		[[ $n =~ $ONLY ]] && return 0
	done
	return 1
}

# block TITLE: starts the table of a block of cases.
block() {
	printf '\n### %s\n\n' "$*"
	echo "| case | exit | wall (s) | peak RSS (MiB) | stderr lines | rows kept | trace | first stderr line |"
	echo "|---|---|---|---|---|---|---|---|"
}

# csvof ARGS...: the file named by the last --csv in ARGS, if any.
csvof() {
	local f= next= a
	for a in "$@"; do
		if [ -n "$next" ]; then
			f=$a next=
			continue
		fi
		case $a in
		--csv) next=1 ;;
		--csv=*) f=${a#--csv=} ;;
		esac
	done
	echo "$f"
}

# row NAME SIGNAL DELAY STDOUT -- ARGS...: runs one command. SIGNAL is "-"
# for none, SIG for the hccl-test process it starts first, or child:SIG for
# the last rank process that one starts; STDOUT is "null" (a file only this
# script reads, for the rows kept), "file", "full",
# "closed", "pipe" (a pipe nobody reads) or "head" (a pipe closed after 34
# lines).
nrow=0
row() {
	local name=$1 sig=$2 delay=$3 out=$4
	shift 5
	nrow=$((nrow + 1))
	wanted "$name" || return 0
	local tf=$work/time.$$
	rm -f "$tf" "$work/stdout"
	: >"$work/stdout"
	(
		ulimit -v "$CAP_KB"
		case $out in
		# stdout a file nobody reads but this script, which counts its rows.
		null) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" >"$work/stdout" 2>"$work/err" ;;
		full) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" >/dev/full 2>"$work/err" ;;
		# Closed inside the timed command: closed around time itself, the
		# file time writes would take descriptor 1.
		closed) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" sh -c 'exec "$0" "$@" >&-' "$@" 2>"$work/err" ;;
		file) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" >"$work/stdout" 2>"$work/err" ;;
		pipe) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" 2>"$work/err" | sleep $((LIMIT + 10)) ;;
		# A reader that stops after 34 lines, as head does.
		head) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" 2>"$work/err" | head -n 34 >/dev/null ;;
		esac
	) &
	local sub=$!
	if [ "$sig" != - ]; then
		sleep "$delay"
		# The hccl-test process started first (a tcp run's parent, not
		# one of the ranks it starts).
		local target
		target=$(pgrep -f -o -- "^$1 " || true)
		# child:SIG goes to the rank process it started last instead.
		case $sig in child:*)
			sig=${sig#child:}
			[ -n "$target" ] && target=$(pgrep -n -P "$target" || true)
			;;
		esac
		[ -n "$target" ] && kill -s "$sig" "$target"
	fi
	if [ "$out" = pipe ]; then
		# The reader never reads; wait for the writer's side only.
		while pgrep -f -- "^timeout -k 5 $LIMIT $1 " >/dev/null; do sleep 0.2; done
		sleep 0.3
		pkill -P "$sub" sleep 2>/dev/null
	fi
	wait "$sub" 2>/dev/null
	local wall=- rss=- code
	if [ -s "$tf" ]; then
		read -r wall rss code < <(tail -n 1 "$tf")
		grep -q 'terminated by signal' "$tf" && code="signal $(grep -o 'signal [0-9]*' "$tf" | grep -o '[0-9]*')"
	else
		code=?
	fi
	[ "$code" = 124 ] && code="124 (time limit)"
	local msg
	msg=$(head -c 160 "$work/err" | head -n 1 | tr '|' '/')
	local lines
	lines=$(wc -l <"$work/err")
	local kept=() csv
	csv=$(csvof "$@")
	case $csv in /dev/* | /proc/*) csv= ;; esac
	if [ -n "$csv" ] && [ -f "$csv" ]; then
		kept+=("csv $(($(grep -c '' "$csv") > 0 ? $(grep -c '' "$csv") - 1 : 0))")
	fi
	if [ "$out" = file ] || [ "$out" = null ]; then
		kept+=("table $(grep -cE '^ +[0-9]+ +[0-9]+ ' "$work/stdout")")
	fi
	local trace=no
	grep -qE '^(goroutine [0-9]+ |panic: |fatal error: |runtime: )' "$work/err" && trace=yes
	if [ -n "${KEEP:-}" ]; then
		cp "$work/err" "$KEEP/$(printf %03d $nrow).err"
		cp "$work/stdout" "$KEEP/$(printf %03d $nrow).out" 2>/dev/null
	fi
	local k="${kept[*]:-}"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$code" "$wall" "$((${rss:-0} / 1024))" "$lines" "${k:--}" "$trace" "${msg:-}"
}

block "the first sweep (bounded failure)"
row "512 ranks of 1 KiB" - 0 null -- "$bin" -p 512 -b 1K -e 1K -n 1 -w 0
row "21 million rows, dry run" - 0 null -- "$bin" -f 1.0002 -b 1 -e 1M --op all -d all -o all -r -1 --dry-run
row "scenario /dev/zero" - 0 null -- "$bin" scenario /dev/zero
row "plot /dev/zero" - 0 null -- "$bin" plot -o "$work/z.png" /dev/zero
row "compare a FIFO nobody writes, SIGINT at 1 s" INT 1 null -- "$bin" compare "$work/fifo" "$work/a.csv"
row "delay=1h -T 3s (shm)" - 0 null -- "$bin" --inject delay=1h -T 3s -b 1K -e 1K
row "delay=30s@rank=1 -T 2s (shm)" - 0 null -- "$bin" --inject delay=30s@rank=1 -T 2s -b 1K -e 1K
row "delay=1h, SIGINT at 2 s (shm)" INT 2 null -- "$bin" --inject delay=1h -T 1h -b 1K -e 1K
row "delay=1h, SIGTERM at 3 s (tcp -p 2)" TERM 3 null -- "$bin" --backend tcp -p 2 --inject delay=1h -T 1h -b 1K -e 1K
row "--csv FIFO nobody reads, SIGINT at 2 s" INT 2 null -- "$bin" -b 1K -e 1M --csv "$work/fifo"
row "stdout pipe nobody reads, SIGTERM at 4 s" TERM 4 pipe -- "$bin" --op all -d all -b 8 -e 64K -n 1 -w 0
row "--csv x --json x" - 0 null -- "$bin" -b 1K -e 1K --csv "$work/x" --json "$work/./x"
row "--csv /dev/stdout beside the table" - 0 file -- "$bin" -b 1K -e 1K --csv /dev/stdout
row "fail=op:3 on shm" - 0 null -- "$bin" --inject fail=op:3 -b 1K -e 4K -T 5s
row "fail=op:3 on shm with --retry 2" - 0 null -- "$bin" --inject fail=op:3 --retry 2 -b 1K -e 4K -T 5s
row "corrupt=op:4, an unchecked call" - 0 null -- "$bin" --inject corrupt=op:4 -b 1K -e 1K -n 5 -w 1
row "-T 99999999999" - 0 null -- "$bin" -T 99999999999 -b 1K -e 1K
row "HCCL_EXEC_TIMEOUT=NaN" - 0 null -- env HCCL_EXEC_TIMEOUT=NaN "$bin" -b 1K -e 1K
row "--link-bw 1e-300MB/s" - 0 null -- "$bin" --link-bw 1e-300MB/s -b 1K -e 1K
row "tcp --master 127.0.0.1:99999" - 0 null -- "$bin" --backend tcp -p 2 --master 127.0.0.1:99999 -b 1K -e 1K
row "tcp --bind nosuch0" - 0 null -- "$bin" --backend tcp -p 2 --bind nosuch0 -b 1K -e 1K
row "plot -o x.gif" - 0 null -- "$bin" plot -o "$work/x.gif" "$work/a.csv"
row "plot -o in.svg in.svg" - 0 null -- "$bin" plot -o "$work/in.svg" "$work/in.svg"
row "compare, no row in common" - 0 null -- "$bin" compare "$work/a.csv" "$work/b.csv"
row "--help > /dev/full" - 0 full -- "$bin" --help
row "algorithms > /dev/full" - 0 full -- "$bin" algorithms
row "table with stdout closed" - 0 closed -- "$bin" -b 1K -e 4K
row "--csv /dev/full" - 0 null -- "$bin" -b 1K -e 4K --csv /dev/full
row "--op allreduce,allreduce" - 0 null -- "$bin" --op allreduce,allreduce -b 1K -e 1K
row "--fusion 4096 -b 1K -e 1K" - 0 null -- "$bin" --fusion 4096 -b 1K -e 1K
row "shm with --master" - 0 null -- "$bin" --master 127.0.0.1:29500 -b 1K -e 1K
row "SIGQUIT at 0.01 s" QUIT 0.01 null -- "$bin" -b 1K -e 1M
row "GOMAXPROCS=100000, tcp -p 2" - 0 null -- env GOMAXPROCS=100000 "$bin" --backend tcp -p 2 -b 1K -e 1K
# class 11: figures that follow the host's load
block "class 11: figures that follow the host's load"
# $work/hog N CMD...: runs CMD while N busy loops keep the CPUs taken, and
# exits with CMD's status.
cat >"$work/hog" <<'HOG'
#!/usr/bin/env bash
n=$1
shift
for _ in $(seq "$n"); do (while :; do :; done) & done
"$@"
s=$?
kill $(jobs -p) 2>/dev/null
exit $s
HOG
chmod +x "$work/hog"
hog=$work/hog
row "8-rank shm probe, 64 MiB rows above the cache" - 0 null -- "$bin" -p 8 -b 64M -e 64M -n 3 -w 1
row "8-rank shm probe beside a hog of 4" - 0 null -- "$hog" 4 "$bin" -p 8 -b 1K -e 64M -f 64 -n 5 -w 1
row "proc -p 8 1 KiB beside a hog of 4" - 0 null -- "$hog" 4 "$bin" --backend proc -p 8 -b 1K -e 1K -n 200 --link-bw 1GB/s
row "proc -p 4 64 KiB beside a hog of 4" - 0 null -- "$hog" 4 "$bin" --backend proc -p 4 -b 64K -e 64K -n 100 --link-bw 1GB/s
row "proc -p 8 1 MiB beside a hog of 4" - 0 null -- "$hog" 4 "$bin" --backend proc -p 8 -b 1M -e 1M -n 50 --link-bw 1GB/s
row "tcp -p 8 1 KiB beside a hog of 4" - 0 null -- "$hog" 4 "$bin" --backend tcp -p 8 -b 1K -e 1K -n 200 --link-bw 1GB/s
row "scenario moe-ep beside a hog of 4" - 0 null -- "$hog" 4 "$bin" scenario examples/moe-ep.json --iters 12
row "tcp -p 8 1 MiB beside a hog of 4" - 0 null -- "$hog" 4 "$bin" --backend tcp -p 8 -b 1M -e 1M -n 50 --link-bw 1GB/s
row "scenario dense-tp-dp beside a hog of 4" - 0 null -- "$hog" 4 "$bin" scenario examples/dense-tp-dp.json --iters 12
# class 1: a stopped rank hangs proc
block "class 1: a stopped rank hangs proc"
row "proc -p 4 ring -T 5s, SIGSTOP rank 3 at 2 s" child:STOP 2 null -- "$bin" --backend proc -p 4 -b 1K -e 64M -n 50 --algo ring -T 5s
row "tcp -p 4 ring -T 5s, SIGSTOP rank 3 at 2 s" child:STOP 2 null -- "$bin" --backend tcp -p 4 -b 1K -e 64M -n 50 --algo ring -T 5s
row "proc -p 8 -T 3s, SIGSTOP rank 7 at 1.5 s" child:STOP 1.5 null -- "$bin" --backend proc -p 8 -b 1K -e 16M -n 50 -T 3s --link-bw 10GB/s
row "scenario proc -p 8 -T 3s, SIGSTOP rank 7 at 3 s" child:STOP 3 null -- "$bin" scenario --backend proc -p 8 -T 3s examples/moe-ep.json
row "tcp -p 4 alltoall -T 2s, SIGSTOP rank 3 at 1 s" child:STOP 1 null -- "$bin" --backend tcp -p 4 --op alltoall -b 1K -e 16M -n 100 -T 2s --link-bw 10GB/s
row "proc -p 4 -T 3s, SIGSTOP rank 3 at 0.05 s (setting up)" child:STOP 0.05 null -- "$bin" --backend proc -p 4 -b 1K -e 64M -n 50 -T 3s
row "tcp -p 4 -T 3s, SIGSTOP rank 3 at 0.05 s (setting up)" child:STOP 0.05 null -- "$bin" --backend tcp -p 4 -b 1K -e 64M -n 50 -T 3s
row "proc -p 4 -T 3s, SIGSTOP rank 3 at 0.4 s (link probe)" child:STOP 0.4 null -- "$bin" --backend proc -p 4 -b 64M -e 256M -n 5 -T 3s
# class 8: failures told in many lines, or wrongly (rank failures)
block "class 8: failures told in many lines, or wrongly (rank failures)"
row "scenario tcp -p 8, SIGINT at 3 s" INT 3 null -- "$bin" scenario --backend tcp -p 8 -n 1000 examples/moe-ep.json
row "scenario tcp -p 8, SIGKILL rank 7 at 3 s" child:KILL 3 null -- "$bin" scenario --backend tcp -p 8 -n 1000 examples/moe-ep.json
row "proc -p 4, SIGTERM rank 3 at 2 s" child:TERM 2 null -- "$bin" --backend proc -p 4 -b 1K -e 64M -n 50 --algo ring -T 5s
row "tcp -p 4, SIGTERM rank 3 at 2 s" child:TERM 2 null -- "$bin" --backend tcp -p 4 -b 1K -e 64M -n 50 --algo ring -T 5s
row "scenario proc -p 8, SIGTERM rank 7 at 3 s" child:TERM 3 null -- "$bin" scenario --backend proc -p 8 -n 1000 examples/moe-ep.json
row "scenario proc -p 8, SIGKILL rank 7 at 3 s" child:KILL 3 null -- "$bin" scenario --backend proc -p 8 -n 1000 examples/moe-ep.json
# class 2: Limits other than MemAvailable
block "class 2: Limits other than MemAvailable"
# A memory cgroup of $1 bytes below this script's own (v2, else v1), removed
# on exit; its directory on stdout, nothing where none can be made.
cgroup() {
	local line id ctrls path base file d
	while IFS=: read -r id ctrls path; do
		if [ "$id" = 0 ] && [ -z "$ctrls" ]; then
			base=/sys/fs/cgroup file=memory.max
			[ -e $base/cgroup.controllers ] || base=/sys/fs/cgroup/unified
		elif [[ ",$ctrls," == *,memory,* ]]; then
			base=/sys/fs/cgroup/memory file=memory.limit_in_bytes
		else
			continue
		fi
		d=$base$path/hostile-$$-$1
		mkdir "$d" 2>/dev/null || continue
		if echo "$1" >"$d/$file" 2>/dev/null; then
			echo "$d"
			return
		fi
		rmdir "$d"
	done </proc/self/cgroup
}
cg2=$(cgroup $((2 << 30)))
cg1=$(cgroup $((1 << 30)))
trap 'rm -rf "$work"; for d in $cg2 $cg1; do rmdir "$d"; done 2>/dev/null' EXIT
# incg CGROUP ARGS...: runs ARGS in the cgroup, or says it could not.
incg() {
	local d=$1
	shift
	if [ -z "$d" ]; then
		echo "no memory cgroup could be made here" >&2
		return 125
	fi
	echo $$ >"$d/cgroup.procs" && exec "$@"
}
export -f incg
# RLIMIT_NPROC binds no root process: the rows that set it run as nobody.
chmod 755 "$work"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
row "-p 8 -e 256M in a 2 GiB memory cgroup" - 0 null -- bash -c 'incg "$@"' incg "$cg2" "$bin" -p 8 -b 1K -e 256M
row "tcp -p 4 -e 256M in a 1 GiB memory cgroup" - 0 null -- bash -c 'incg "$@"' incg "$cg1" "$bin" --backend tcp -p 4 -b 1K -e 256M
row "-p 2 -e 1M in a 1 GiB memory cgroup (fits)" - 0 null -- bash -c 'incg "$@"' incg "$cg1" "$bin" -p 2 -b 1K -e 1M -n 2 -w 0
row "ulimit -v 8000000, -p 8 -e 256M" - 0 null -- prlimit --as=8192000000 "$bin" -p 8 -b 1K -e 256M
row "ulimit -u 3, -p 8 (as nobody)" - 0 null -- prlimit --nproc=3 "${nobody[@]}" "$bin" -p 8 -b 1K -e 1M
row "ulimit -u 12, -p 8 (as nobody)" - 0 null -- prlimit --nproc=12 "${nobody[@]}" "$bin" -p 8 -b 1K -e 1M
row "ulimit -u 40, tcp -p 8 (as nobody)" - 0 null -- prlimit --nproc=40 "${nobody[@]}" "$bin" --backend tcp -p 8 -b 1K -e 1K
row "ulimit -n 64, tcp -p 32" - 0 null -- prlimit --nofile=64 "$bin" --backend tcp -p 32 -b 1K -e 1M
row "ulimit -n 64, proc -p 32" - 0 null -- prlimit --nofile=64 "$bin" --backend proc -p 32 -b 1K -e 1M
# Refused by the Go runtime before main, as docs/bad-input.md says.
row "GOMEMLIMIT=abc (the runtime's refusal)" - 0 null -- env GOMEMLIMIT=abc "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
# class 4: Stack traces for sizes the docs allow
block "class 4: Stack traces for sizes the docs allow"
row "sim -p 8 -b 64T -e 64T --sim-data=false" - 0 null -- "$bin" --backend sim -p 8 -b 64T -e 64T --sim-data=false
row "sim -p 8 -b 1024T -e 1024T --sim-data=false" - 0 null -- "$bin" --backend sim -p 8 -b 1024T -e 1024T --sim-data=false -n 2 -w 0
row "sim -p 4 alltoall 1024T --sim-data=false" - 0 null -- "$bin" --backend sim -p 4 --op alltoall -b 1024T -e 1024T --sim-data=false -n 2 -w 0
row "sim -p 5 bruck allgather 1024T --retry 1 --sim-data=false" - 0 null -- "$bin" --backend sim -p 5 --op allgather --algo bruck --retry 1 -b 1024T -e 1024T --sim-data=false -n 2 -w 0
row "sim -p 4 mulsum 512T..1024T --sim-data=false" - 0 null -- "$bin" --backend sim -p 4 -o mulsum -b 512T -e 1024T --sim-data=false -n 2 -w 0
# class 9: Costs that grow too fast
block "class 9: Costs that grow too fast"
# Inputs: a run of -N 0 stopped by SIGINT once its CSV is past 70 MB
# (25-40 s; at most 300 s on a busy host), 120,000 distinct rows made
# from a.csv's first, and one row measured 200,000 times in Go benchmark
# lines.
if wanted "compare 120,000" "plot 120,000" "-N 0 CSV" "-N 0 --bench" "200,000 times"; then
	"$bin" -p 2 -b 4 -e 64 -f 1.1 -N 0 --csv "$work/n0.csv" --bench "$work/n0.txt" >/dev/null 2>&1 &
	n0=$!
	for _ in $(seq 600); do
		[ "$(stat -c %s "$work/n0.csv" 2>/dev/null || echo 0)" -gt 70000000 ] && break
		sleep 0.5
	done
	kill -INT "$n0"
	wait "$n0"
	awk 'NR == 1 { print } NR == 2 { for (i = 1; i <= 120000; i++) { r = $0; sub(/,false,1024,256,/, ",false," 4 * i "," i ",", r); print r } }' \
		"$work/a.csv" >"$work/rows.csv"
	awk 'BEGIN { for (i = 0; i < 200000; i++) printf "BenchmarkAllReduce/size=1KiB 1 %d ns/op\n", 1000 + i % 977 }' >"$work/many.txt"
	row "compare 120,000 distinct rows" - 0 null -- "$bin" compare "$work/rows.csv" "$work/rows.csv"
	row "plot 120,000 distinct rows" - 0 null -- "$bin" plot -o "$work/rows.svg" "$work/rows.csv"
	awk 'NR == 1 { print } NR == 2 { for (i = 1; i <= 120000; i++) { r = $0; sub(/,false,1024,256,[0-9]+,[0-9.]+,/, ",false," 4 * i "," i ",20," 11 + i * 0.01 ",", r); print r } }' \
		"$work/a.csv" >"$work/rows-new.csv"
fi
row "compare 120,000 rows, every time changed" - 0 null -- "$bin" compare "$work/rows.csv" "$work/rows-new.csv"
row "plot 120,000 rows of two files" - 0 null -- "$bin" plot -o "$work/rows2.svg" "$work/rows.csv" "$work/rows-new.csv"
row "compare -N 0 CSV past 70 MB" - 0 null -- "$bin" compare "$work/n0.csv" "$work/n0.csv"
row "plot -N 0 CSV past 70 MB" - 0 null -- "$bin" plot -o "$work/n0.png" "$work/n0.csv"
row "compare -N 0 --bench of that run" - 0 null -- "$bin" compare "$work/n0.txt" "$work/n0.txt"
row "compare a row measured 200,000 times" - 0 null -- "$bin" compare "$work/many.txt" "$work/many.txt"
# class 8: Failures told in many lines, or wrongly (CSV columns, long lines)
block "class 8: Failures told in many lines, or wrongly (CSV columns, long lines)"
printf 'schema_version,op,size_bytes,time_us,busbw_GBps,' >"$work/one-line.csv"
truncate -s 50M "$work/one-line.csv"
head -c 50M /dev/zero | tr '\0' x >"$work/one-line.txt"
row "compare CSV reordered, BOM" - 0 null -- "$bin" compare results/testdata/compare/reordered-bom.csv results/testdata/compare/reordered-bom.csv
row "plot CSV reordered, BOM" - 0 null -- "$bin" plot -o "$work/bom.svg" results/testdata/compare/reordered-bom.csv
row "compare CSV missing 6 columns" - 0 null -- "$bin" compare results/testdata/compare/missing-columns.csv "$work/a.csv"
row "compare 50 MB one-line CSV" - 0 null -- "$bin" compare "$work/one-line.csv" "$work/a.csv"
row "plot 50 MB one-line CSV" - 0 null -- "$bin" plot -o "$work/l.png" "$work/one-line.csv"
row "compare 50 MB one line of x" - 0 null -- "$bin" compare "$work/one-line.txt" "$work/a.csv"
# class 5: Bad input answered with 1
block "class 5: Bad input answered with 1"
row "PMI_FD=abc (MPICH rank, tcp)" - 0 null -- env PMI_RANK=0 PMI_SIZE=2 PMI_FD=abc "$bin" --backend tcp -b 1K -e 1K
row "Open MPI session dir /nonexistent (tcp)" - 0 null -- env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=7 OMPI_MCA_orte_jobfam_session_dir=/nonexistent "$bin" --backend tcp -b 1K -e 1K
row "MASTER_ADDR='bad host!' (torchrun rank 1, tcp)" - 0 null -- env RANK=1 WORLD_SIZE=2 "MASTER_ADDR=bad host!" MASTER_PORT=29500 HCCL_TEST_SECRET=s "$bin" --backend tcp -b 1K -e 1K --connect-timeout 5s
row "rank 1 of mpirun naming no job (default backend)" - 0 null -- env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "plot -o /nonexistent/x.png" - 0 null -- "$bin" plot -o /nonexistent/x.png "$work/a.csv"
row "PMI_FD=999, not open (tcp)" - 0 null -- env PMI_RANK=0 PMI_SIZE=2 PMI_FD=999 "$bin" --backend tcp -b 1K -e 1K
row "Open MPI session dir a file (tcp)" - 0 null -- env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=7 OMPI_MCA_orte_jobfam_session_dir="$work/a.csv" "$bin" --backend tcp -b 1K -e 1K
row "SLURM_STEP_NODELIST=node[1- (tcp)" - 0 null -- env SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=5 SLURM_STEP_ID=0 "SLURM_STEP_NODELIST=node[1-" "$bin" --backend tcp -b 1K -e 1K
row "plot -o /proc/x.png" - 0 null -- "$bin" plot -o /proc/x.png "$work/a.csv"
# Ranks of one world started with different backends (rank 0's exit; both
# ranks' lines on stderr). Under mpirun only where Open MPI is installed.
mixed='-b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s --connect-timeout 20s'
if command -v mpirun.openmpi >/dev/null; then
	row "mpirun -np 2: rank 0 tcp, rank 1 proc" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" --backend tcp $1; else exec "$0" --backend proc $1; fi' "$bin" "$mixed"
	row "mpirun -np 2: rank 0 proc, rank 1 tcp" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" --backend proc $1; else exec "$0" --backend tcp $1; fi' "$bin" "$mixed"
	row "mpirun -np 3: ranks 0-1 proc, rank 2 tcp" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 3 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 2 ]; then exec "$0" --backend tcp $1; else exec "$0" --backend proc $1; fi' "$bin" "$mixed"
fi
row "torchrun variables: rank 0 tcp, rank 1 proc" - 0 null -- sh -c 'RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$2 HCCL_TEST_SECRET=s "$0" --backend proc $1 & RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$2 HCCL_TEST_SECRET=s "$0" --backend tcp $1; s=$?; wait; exit $s' "$bin" "$mixed" "$port"
row "HCCL_TEST_* variables: rank 0 proc, rank 1 tcp" - 0 null -- sh -c 'HCCL_TEST_RANK=1 HCCL_TEST_WORLD_SIZE=2 HCCL_TEST_MASTER=127.0.0.1:$2 HCCL_TEST_SECRET=s "$0" --backend tcp $1 & HCCL_TEST_RANK=0 HCCL_TEST_WORLD_SIZE=2 HCCL_TEST_MASTER=127.0.0.1:$2 HCCL_TEST_SECRET=s "$0" --backend proc $1; s=$?; wait; exit $s' "$bin" "$mixed" $((port + 1))
# class 6: Bad input accepted
block "class 6: Bad input accepted"
row "HCCL_TEST_KERNELS=portabel" - 0 null -- env HCCL_TEST_KERNELS=portabel "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "compare --alpha 0" - 0 null -- "$bin" compare --alpha 0 "$work/a.csv" "$work/a.csv"
row "RANK=1 without WORLD_SIZE, tcp -p 2" - 0 null -- env RANK=1 "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "OMPI_COMM_WORLD_SIZE=4 without a rank, tcp -p 2" - 0 null -- env OMPI_COMM_WORLD_SIZE=4 "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "HCCL_OP_RETRY_PARAMS=bogus, retry off" - 0 null -- env HCCL_OP_RETRY_PARAMS=bogus "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "--inject 'delay=1ms;delay=2ms'" - 0 null -- "$bin" --inject 'delay=1ms;delay=2ms' -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "sbatch script's environment, -p 8 (runs)" - 0 null -- env SLURM_JOB_ID=43 SLURM_NTASKS=8 SLURM_NNODES=1 SLURM_JOB_NODELIST=vm SLURM_PROCID=0 SLURM_LOCALID=0 "$bin" -p 8 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "sbatch script's environment, tcp -p 4 (runs)" - 0 null -- env SLURM_JOB_ID=43 SLURM_NTASKS=8 SLURM_NNODES=1 SLURM_JOB_NODELIST=vm SLURM_PROCID=0 SLURM_LOCALID=0 "$bin" --backend tcp -p 4 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "salloc environment, tcp -p 2 (runs)" - 0 null -- env SLURM_JOB_ID=44 SLURM_NNODES=2 "SLURM_JOB_NODELIST=node[1-2]" "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "HCCL_TEST_KERNEL=portable (misspelt name)" - 0 null -- env HCCL_TEST_KERNEL=portable "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "srun step without SLURM_PROCID, tcp -p 2" - 0 null -- env SLURM_JOB_ID=5 SLURM_STEP_ID=0 SLURM_NTASKS=2 "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "MASTER_ADDR without MASTER_PORT, tcp -p 2" - 0 null -- env MASTER_ADDR=node01 "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "--inject 'slow=1ms@rank=1;slow=5ms@rank=1'" - 0 null -- "$bin" --inject 'slow=1ms@rank=1;slow=5ms@rank=1' -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "HCCL_TEST_SPIN=1h on shm" - 0 null -- env HCCL_TEST_SPIN=1h "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "HCCL_TEST_SPIN=fast on sim" - 0 null -- env HCCL_TEST_SPIN=fast "$bin" --backend sim -b 1K -e 1K -n 1 -w 0
row "HCCL_TEST_MPI_COLL=blockng on shm" - 0 null -- env HCCL_TEST_MPI_COLL=blockng "$bin" -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
row "HCCL_TEST_MPI_COLL=1 on tcp -p 2" - 0 null -- env HCCL_TEST_MPI_COLL=1 "$bin" --backend tcp -p 2 -b 1K -e 1K -n 1 -w 0 --link-bw 10GB/s
# class 8: Failures told wrongly (launcher variables, a file's type)
block "class 8: Failures told wrongly (launcher variables, a file's type)"
mkdir -p -m 700 "$work/tmp" "$work/tmp/hccl-test-$(id -u)"
mkfifo "$work/tmp/hccl-test-$(id -u)/hccl-test-slurm-77.0"
mkdir "$work/tmp/hccl-test-$(id -u)/hccl-test-slurm-78.0"
row "OMPI_COMM_WORLD_LOCAL_SIZE=abc (tcp)" - 0 null -- env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_SIZE=abc "$bin" --backend tcp -b 1K -e 1K
row "srun task without node count or list (tcp)" - 0 null -- env SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=3 SLURM_STEP_ID=0 "$bin" --backend tcp -b 1K -e 1K
row "rendezvous file a FIFO (srun task 1, tcp)" - 0 null -- env TMPDIR="$work/tmp" SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_NNODES=1 "$bin" --backend tcp -b 1K -e 1K --connect-timeout 3s
row "MPI_LOCALNRANKS=two (tcp)" - 0 null -- env PMI_RANK=0 PMI_SIZE=2 MPI_LOCALNRANKS=two "$bin" --backend tcp -b 1K -e 1K
row "srun on 2 nodes without a node list (tcp)" - 0 null -- env SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=3 SLURM_STEP_ID=0 SLURM_NNODES=2 "$bin" --backend tcp -b 1K -e 1K
row "rendezvous file a directory (srun task 1, tcp)" - 0 null -- env TMPDIR="$work/tmp" SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_JOB_ID=78 SLURM_STEP_ID=0 SLURM_NNODES=1 "$bin" --backend tcp -b 1K -e 1K --connect-timeout 3s
# issue 36 item 2: program names
block "issue 36 item 2: program names"
mkdir -p "$work/names" "$work/made" "$work/taken"
for n in all_reduce_perf all_gather_test foo_perf hypercube_perf alltoallvc_test my-bench; do ln -sf "$bin" "$work/names/$n"; done
touch "$work/taken/all_reduce_perf"
row "all_reduce_perf -b 1K -e 1K -n 2 (a link)" - 0 null -- "$work/names/all_reduce_perf" -b 1K -e 1K -n 2
row "all_gather_test -p 2 -b 1K -e 4K -n 2 (a link)" - 0 null -- "$work/names/all_gather_test" -p 2 -b 1K -e 4K -n 2
row "foo_perf -p 2 (a link)" - 0 null -- "$work/names/foo_perf" -p 2
row "hypercube_perf -p 2 (a link)" - 0 null -- "$work/names/hypercube_perf" -p 2
row "alltoallvc_test -p 2 (a link)" - 0 null -- "$work/names/alltoallvc_test" -p 2
row "my-bench -p 2 -b 1K -e 1K -n 2 (a link)" - 0 null -- "$work/names/my-bench" -p 2 -b 1K -e 1K -n 2
row "links DIR" - 0 null -- "$bin" links "$work/made"
row "links DIR (a file of a program's name)" - 0 null -- "$bin" links "$work/taken"
# issue 36 item 7: smaller things each user hit
block "issue 36 item 7: smaller things each user hit"
row "--backend mpi (default build)" - 0 null -- "$bin" --backend mpi -p 2
row "--backend mpi --algo native (default build)" - 0 null -- "$bin" --backend mpi --algo native
row "scenario --backend mpi (default build)" - 0 null -- "$bin" scenario --backend mpi examples/dense-tp-dp.json
row "plot with no -o" - 0 null -- sh -c 'cd "$0" && exec "$1" plot a.csv' "$work" "$bin"
row "plot with no -o, a directory it cannot write" - 0 null -- sh -c 'cd /proc && exec "$0" plot "$1"' "$bin" "$work/a.csv"
# issue 36 item 1: launcher is one world
# hccl_test's launch line (no --backend; -p the ranks per node) under the
# real launchers where installed, then each launcher's environment given
# to one process: -p against the launcher's processes on this host, the
# variables that say how many, and backends that cannot span processes.
small1='-b 1K -e 64K -n 2 -w 1 --link-bw 10GB/s'
if command -v mpirun.openmpi >/dev/null; then
	row "mpirun -np 4 -p 4, no --backend (one table)" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 "$bin" $small1 -p 4
	row "mpirun -np 4 -p 8 (contradicts)" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 "$bin" $small1 -p 8
	row "mpirun -np 2 --backend shm" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 "$bin" $small1 --backend shm
	row "mpirun -np 1 -p 4 (one process: shm's 4 ranks)" - 0 null -- mpirun.openmpi --allow-run-as-root --oversubscribe -np 1 "$bin" $small1 -p 4
fi
if command -v mpiexec.hydra >/dev/null; then
	row "mpiexec.hydra -n 4 -p 4, no --backend (one table)" - 0 null -- mpiexec.hydra -n 4 "$bin" $small1 -p 4
	row "mpiexec.hydra -n 2 -p 99999999999" - 0 null -- mpiexec.hydra -n 2 "$bin" $small1 -p 99999999999
fi
ompi1='OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_SIZE=4 PMIX_NAMESPACE=prterun-vm-9@1'
srun1='SLURM_PROCID=1 SLURM_NTASKS=4 SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_NNODES=1 SLURM_NODEID=0'
row "Open MPI rank, -p 2 of 4 on this host" - 0 null -- env $ompi1 "$bin" -p 2 -b 1K -e 1K --dry-run
row "Open MPI rank, -p 4 of 4 (dry run)" - 0 null -- env $ompi1 "$bin" -p 4 -b 1K -e 1K --dry-run
row "Open MPI rank, -p 0" - 0 null -- env $ompi1 "$bin" -p 0 -b 1K -e 1K --dry-run
row "Open MPI rank, -p -4" - 0 null -- env $ompi1 "$bin" -p -4 -b 1K -e 1K --dry-run
row "Open MPI rank, -p NaN" - 0 null -- env $ompi1 "$bin" -p NaN -b 1K -e 1K --dry-run
row "Open MPI rank, --backend sim" - 0 null -- env $ompi1 "$bin" --backend sim -b 1K -e 1K --dry-run
row "srun task, SLURM_TASKS_PER_NODE=2(x (malformed)" - 0 null -- env $srun1 'SLURM_TASKS_PER_NODE=2(x' "$bin" -b 1K -e 1K --dry-run
row "srun task, SLURM_TASKS_PER_NODE=1(x99999999)" - 0 null -- env $srun1 'SLURM_TASKS_PER_NODE=1(x99999999)' "$bin" -b 1K -e 1K --dry-run
row "srun task, SLURM_TASKS_PER_NODE=0,4 on node 0" - 0 null -- env $srun1 SLURM_TASKS_PER_NODE=0,4 "$bin" -b 1K -e 1K --dry-run
row "srun task, SLURM_NODEID=9 of SLURM_TASKS_PER_NODE=2(x2)" - 0 null -- env $srun1 SLURM_NODEID=9 'SLURM_TASKS_PER_NODE=2(x2)' "$bin" -b 1K -e 1K --dry-run
row "srun task, -p 2 of SLURM_TASKS_PER_NODE=4" - 0 null -- env $srun1 SLURM_TASKS_PER_NODE=4 "$bin" -p 2 -b 1K -e 1K --dry-run
row "torchrun rank, -p 3 of WORLD_SIZE=2" - 0 null -- env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29519 HCCL_TEST_SECRET=s "$bin" -p 3 -b 1K -e 1K --dry-run
row "scenario under mpirun's variables, --backend shm" - 0 null -- env $ompi1 "$bin" scenario --backend shm examples/dense-tp-dp.json
# issue 37 parts 1-3: fit, predict, export
awk 'NR > 1 && /^[0-9 ]/ { $6 = "nan" } { print }' results/testdata/logs/nccl-tests-2.19.log >"$work/nan-time.log"
head -c 100M /dev/zero >"$work/zero.json"
row "fit: a log of two clusters" - 0 null -- "$bin" fit -o "$work/m.json" predict/testdata/two-clusters.log
row "fit: --topology against the rank lines" - 0 null -- "$bin" fit -o "$work/m.json" --topology servers=1,per-server=8 results/testdata/logs/nccl-tests-2.19.log
row "fit: a log without rank lines, no --topology" - 0 null -- "$bin" fit -o "$work/m.json" results/testdata/logs/hccl_test.log
row "fit: --topology FILE=servers=NaN" - 0 null -- "$bin" fit -o "$work/m.json" --topology results/testdata/logs/hccl_test.log=servers=NaN,per-server=8 results/testdata/logs/hccl_test.log
row "fit: a log whose out-of-place times are nan (rows skipped, counted)" - 0 null -- "$bin" fit -o "$work/m.json" "$work/nan-time.log"
row "fit: a FIFO" - 0 null -- "$bin" fit -o "$work/m.json" "$work/fifo"
row "fit: a directory" - 0 null -- "$bin" fit -o "$work/m.json" results
row "fit: /dev/urandom" - 0 null -- "$bin" fit -o "$work/m.json" /dev/urandom
row "fit: -o the log itself" - 0 null -- "$bin" fit -o results/testdata/logs/nccl-tests-2.19.log results/testdata/logs/nccl-tests-2.19.log
row "fit: -o /proc/x.json" - 0 null -- "$bin" fit -o /proc/x.json results/testdata/logs/nccl-tests-2.19.log
row "predict: a model of version 2" - 0 null -- "$bin" predict --model predict/testdata/model-v2.json --topology servers=4,per-server=4
row "predict: a hand-edited model" - 0 null -- "$bin" predict --model predict/testdata/model-edited.json --topology servers=4,per-server=4
row "predict: a model's other optimum hand-edited" - 0 null -- "$bin" predict --model predict/testdata/model-optima.json --topology servers=4,per-server=4
row "predict: a 100 MB model of zeros" - 0 null -- "$bin" predict --model "$work/zero.json" --topology servers=4,per-server=4
row "predict: a FIFO model" - 0 null -- "$bin" predict --model "$work/fifo" --topology servers=4,per-server=4
row "predict: 131072 ranks" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=1024,per-server=128
row "predict: -e 2000T" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=4,per-server=4 -e 2000T
row "predict: -b NaN" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=4,per-server=4 -b NaN
row "predict: -b 1 -e 1024T -f 2 (51 sizes)" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=4,per-server=4 -b 1 -e 1024T -f 2
row "predict: 65536 ranks, 1K..1G" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=8192,per-server=8 -b 1K -e 1G -f 4
row "predict: --csv /dev/full" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=4,per-server=4 --csv /dev/full
row "predict: --export nccl-tuner -o FIFO nobody reads" - 0 null -- "$bin" predict --model predict/testdata/model.json --topology servers=4,per-server=4 --export nccl-tuner -o "$work/fifo"
# issue 37 part 4: the simulator at cluster scale
block "issue 37 part 4: the simulator at cluster scale"
row "sim -p 2048, 1 KiB allreduce, checked" - 0 null -- "$bin" --backend sim -p 2048 -b 1K -e 1K -n 2 -w 1
row "sim -p 16384 --sim-data=false, 1 KiB rhd" - 0 null -- "$bin" --backend sim --sim-data=false -p 16384 --topology per-server=8 --algo rhd -b 1K -e 1K -n 2 -w 1
row "sim -p 70000" - 0 null -- "$bin" --backend sim --sim-data=false -p 70000 -b 1K -e 1K
row "shm -p 5000" - 0 null -- "$bin" -p 5000 -b 1K -e 1K
row "sim -p 4096, 1 KiB allgather, checked" - 0 null -- "$bin" --backend sim -p 4096 --op allgather -b 1K -e 1K -n 1 -w 0
# issue 36 item 3: nccl-tests 2.19 (-T 0, NCCL_TESTS_MIN_BW, NCCL_TESTS_SPLIT and _MASK, -J with -I)
block "issue 36 item 3: nccl-tests 2.19 (-T 0, NCCL_TESTS_MIN_BW, NCCL_TESTS_SPLIT and _MASK, -J with -I)"
row "-T 0" - 0 null -- "$bin" -T 0 -p 2 -b 1K -e 64K
row "NCCL_TESTS_MIN_BW above the average" - 0 null -- env NCCL_TESTS_MIN_BW=1000000 "$bin" -p 2 -b 1K -e 64K
row "NCCL_TESTS_MIN_BW below the average" - 0 null -- env NCCL_TESTS_MIN_BW=0.000001 "$bin" -p 2 -b 1K -e 64K
row "NCCL_TESTS_MIN_BW=NaN" - 0 null -- env NCCL_TESTS_MIN_BW=NaN "$bin" -p 2 -b 1K -e 64K
row "NCCL_TESTS_MIN_BW=-1" - 0 null -- env NCCL_TESTS_MIN_BW=-1 "$bin" -p 2 -b 1K -e 64K
row "NCCL_TESTS_SPLIT='MOD 2' -p 8" - 0 null -- env "NCCL_TESTS_SPLIT=MOD 2" "$bin" -p 8 -b 1K -e 64K
row "NCCL_TESTS_SPLIT='MOD 0'" - 0 null -- env "NCCL_TESTS_SPLIT=MOD 0" "$bin" -p 8 -b 1K -e 64K
row "NCCL_TESTS_SPLIT=%3 -p 8" - 0 null -- env "NCCL_TESTS_SPLIT=%3" "$bin" -p 8 -b 1K -e 64K
row "NCCL_TESTS_SPLIT_MASK=zz" - 0 null -- env NCCL_TESTS_SPLIT_MASK=zz "$bin" -p 8 -b 1K -e 64K
row "-I 1 -J FILE -p 4 -N 2" - 0 null -- "$bin" -I 1 -J "$work/periter.json" -p 4 -b 1K -e 64K -N 2
# issue 36 items 4-5: hccl_test's names and flags; logs as people keep them
row "hccl_test's long names (--npus 2 --op max --warmup_iters 1)" - 0 null -- "$bin" --minbytes 1K --maxbytes 4K --stepfactor 2 --datatype fp32 --op max --npus 2 --iters 2 --warmup_iters 1 --check 1 --root 0
row "--npus 0" - 0 null -- "$bin" --npus 0 -b 1K -e 1K
row "--npus 99999999999999999999" - 0 null -- "$bin" --npus 99999999999999999999 -b 1K -e 1K
row "-s (no value)" - 0 null -- "$bin" -s
row "--zero_copy=NaN" - 0 null -- "$bin" --zero_copy=NaN -p 2 -b 1K -e 1K
row "--accelerator ''" - 0 null -- "$bin" --accelerator '' -p 2 -b 1K -e 1K
row "--onlydevicetime 0 --symmetric_memory 0 (accepted)" - 0 null -- "$bin" --onlydevicetime 0 --symmetric_memory 0 -p 2 -b 1K -e 1K -n 2
row "--op max --redop sum" - 0 null -- "$bin" --op max --redop sum -p 2
row "--op sum,allreduce" - 0 null -- "$bin" --op sum,allreduce -p 2
# Logs: a plain one named for its op, one named for none, a FIFO and a
# directory named all_reduce_perf.log, 400,000 rank lines of as many hosts,
# a rank line of rank 16777215, and a -J report of 2^23 GPUs a process.
awk 'BEGIN { print "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0";
	for (r = 0; r < 400000; r++) printf "#  Rank %6d Group  0 Pid %6d on host%06d device  0 [0x1b] NVIDIA H100\n", r, r, r;
	print "           8             2     float     sum      -1    12.03    0.00    0.00       0    12.15    0.00    0.00       0" }' > "$work/all_reduce_perf-400k.log"
printf '#  Rank 16777215 Group  0 Pid 1 on h device  0 [0x1b] X\n           8             2     float     sum      -1    12.03    0.00    0.00       0    12.15    0.00    0.00       0\n' > "$work/nccl_allreduce_rank.txt"
printf '{"version":3,"config":{"nthreads":1,"ngpus":8388608,"devices":[{"rank":0,"hostname":"a"},{"rank":8388608,"hostname":"b"}]},"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":1,"alg_bw":0.01,"bus_bw":0.01,"nwrong":0},"in_place":null,"experiment_name":"allreduce"}]}\n' > "$work/huge-ngpus.json"
sed 1d "$work/all_reduce_perf-400k.log" | head -3 > "$work/plain.log"
tail -1 "$work/all_reduce_perf-400k.log" >> "$work/plain.log"
mkfifo "$work/fifo-all_reduce_perf.log"
mkdir -p "$work/dir-all_reduce_perf.log"
row "convert a plain log named all_reduce_perf-400k.log (400,000 hosts) --bench" - 0 null -- "$bin" convert --bench - "$work/all_reduce_perf-400k.log"
row "convert a log of rank 16777215" - 0 null -- "$bin" convert "$work/nccl_allreduce_rank.txt"
row "convert a -J report of 2^23 GPUs a process" - 0 null -- "$bin" convert "$work/huge-ngpus.json"
row "convert a plain log named for no op" - 0 null -- "$bin" convert "$work/plain.log"
row "convert --op allgather a plain log" - 0 null -- "$bin" convert --op allgather "$work/plain.log"
row "convert --op sum" - 0 null -- "$bin" convert --op sum "$work/plain.log"
row "convert --ranks NaN" - 0 null -- "$bin" convert --ranks NaN "$work/plain.log"
row "convert --ranks -1" - 0 null -- "$bin" convert --ranks -1 "$work/plain.log"
row "convert --ranks 16777216" - 0 null -- "$bin" convert --ranks 16777216 "$work/plain.log"
row "convert --ranks 4 a log of 400,000 ranks" - 0 null -- "$bin" convert --ranks 4 "$work/all_reduce_perf-400k.log"
row "convert a FIFO named all_reduce_perf.log (no writer)" - 0 null -- "$bin" convert "$work/fifo-all_reduce_perf.log"
row "convert a directory named all_reduce_perf.log" - 0 null -- "$bin" convert "$work/dir-all_reduce_perf.log"
row "convert a missing all_reduce_perf.log" - 0 null -- "$bin" convert "$work/missing/all_reduce_perf.log"
row "compare the log of 400,000 rank lines (past the first MiB) with itself" - 0 null -- "$bin" compare "$work/all_reduce_perf-400k.log" "$work/all_reduce_perf-400k.log"
row "plot a plain log named for no op" - 0 null -- "$bin" plot -o "$work/plain.svg" "$work/plain.log"
# issue 36 item 6: compare
"$bin" -p 2 -b 1K -e 4K -n 2 -w 0 --runs 4 --bench "$work/r2.txt" >/dev/null 2>&1
"$bin" -p 4 -b 1K -e 4K -n 2 -w 0 --runs 4 --bench "$work/r4.txt" >/dev/null 2>&1
mkdir -p "$work/adir"
mkfifo "$work/fifo6"
long=$(printf '/size:(1KiB'; for i in $(seq 1 6000); do printf ' OR %dB' "$i"; done; printf ')')
row "compare three files" - 0 null -- "$bin" compare "$work/r2.txt" "$work/r2.txt" "$work/r2.txt"
row "compare 2 and 4 ranks, no flag" - 0 null -- "$bin" compare "$work/r2.txt" "$work/r4.txt"
row "compare -ignore ranks, 2 and 4 ranks" - 0 null -- "$bin" compare -ignore ranks "$work/r2.txt" "$work/r4.txt"
row "compare -col ranks -row /size@num, 2 and 4 ranks" - 0 null -- "$bin" compare -col ranks -row /size@num "$work/r2.txt" "$work/r4.txt"
row "compare -filter '/size:(1KiB'" - 0 null -- "$bin" compare -filter '/size:(1KiB' "$work/r2.txt" "$work/r4.txt"
row "compare -filter of 6000 sizes (43 KB)" - 0 null -- "$bin" compare -filter "$long" "$work/r2.txt" "$work/r2.txt"
row "compare -col rank (no such key)" - 0 null -- "$bin" compare -col rank "$work/r2.txt" "$work/r4.txt"
row "compare -col .unit" - 0 null -- "$bin" compare -col .unit "$work/r2.txt" "$work/r4.txt"
row "compare one file" - 0 null -- "$bin" compare "$work/r2.txt"
row "compare, a directory third" - 0 null -- "$bin" compare "$work/r2.txt" "$work/r2.txt" "$work/adir"
row "compare, /dev/null third" - 0 null -- "$bin" compare "$work/r2.txt" "$work/r2.txt" /dev/null
row "compare, a FIFO nobody writes third, SIGINT at 1 s" INT 1 null -- "$bin" compare "$work/r2.txt" "$work/r2.txt" "$work/fifo6"
row "compare, a FIFO nobody writes third" - 0 null -- "$bin" compare "$work/r2.txt" "$work/r2.txt" "$work/fifo6"
row "compare one file 200 times" - 0 null -- sh -c 'f=$1; shift; set --; for i in $(seq 200); do set -- "$@" "$f"; done; exec "$0" compare "$@"' "$bin" "$work/r2.txt"
ln -sf /dev/full "$work/full.png"
row "plot -o into /dev/full (prefix once)" - 0 null -- "$bin" plot -o "$work/full.png" "$work/a.csv"

# class 3: rows lost on the way out
block "class 3: rows lost on the way out"
row "--csv --json | head -34" - 0 head -- "$bin" -b 1K -e 64M --csv "$work/h.csv" --json "$work/h.json"
row "--csv /dev/full -b 1K -e 1M" - 0 file -- "$bin" -b 1K -e 1M --csv /dev/full
row "SIGHUP at 3 s (shm, rows flowing)" HUP 3 null -- "$bin" -b 1K -e 4M -n 500 --link-bw 10GB/s --algo ring --csv "$work/hup.csv"
row "sim -p 8 -e 128M, SIGINT at 2 s" INT 2 null -- "$bin" --backend sim -p 8 -b 1K -e 128M --csv "$work/sim.csv"
row "SIGPIPE at 3 s (tcp -p 2, rows flowing)" PIPE 3 null -- "$bin" --backend tcp -p 2 -b 1K -e 64M --link-bw 10GB/s --algo ring --csv "$work/pipe.csv"
row "-N 0 | head -34, SIGTERM never needed" - 0 head -- "$bin" -N 0 -b 1K -e 64K --csv "$work/n0.csv"
row "stdout /dev/full with --csv" - 0 full -- "$bin" -b 1K -e 1M --csv "$work/full.csv"
row "proc -p 4 --csv --json, SIGTERM at 3 s (rows flowing)" TERM 3 null -- "$bin" --backend proc -p 4 -b 1K -e 4M -n 500 --link-bw 10GB/s --algo ring --csv "$work/term.csv" --json "$work/term.json"
row "--json /dev/full beside --csv" - 0 null -- "$bin" -b 1K -e 1M --csv "$work/jfull.csv" --json /dev/full

# class 7: outputs that collide
block "class 7: outputs that collide"
row "--csv FILE 2> FILE" - 0 null -- "$bin" -b 1K -e 1K --csv "$work/err"
row "--json /dev/stderr, stderr a file" - 0 null -- "$bin" -b 1K -e 1K --json /dev/stderr
ln -sf err "$work/errlink"
row "--bench a link to stderr's file" - 0 null -- "$bin" -b 1K -e 1K --bench "$work/errlink"
row "--csv /proc/self/fd/2" - 0 null -- "$bin" -b 1K -e 1K --csv /proc/self/fd/2
if wanted "a second run"; then
	"$bin" -b 1K -e 64M -n 200 --csv "$work/held.csv" >/dev/null 2>&1 &
	held=$!
	sleep 1
fi
row "a second run on one --csv" - 0 null -- "$bin" -b 1K -e 1K --csv "$work/held.csv"
row "a second run, its --json on the first's --csv" - 0 null -- "$bin" -b 1K -e 1K --json "$work/./held.csv"
[ -n "${held:-}" ] && kill "$held" 2>/dev/null && wait "$held" 2>/dev/null

# class 9: an output FIFO without a reader
block "class 9: an output FIFO without a reader"
row "--csv FIFO nobody reads, no signal" - 0 null -- "$bin" -b 1K -e 4K --csv "$work/fifo"

# issue 38: isolate
mkdir -p "$work/iso-fifo" "$work/iso-dev" "$work/iso-long" "$work/iso-empty"
mkfifo "$work/iso-fifo/nodeA-nodeB.log" 2>/dev/null
ln -sf /dev/zero "$work/iso-dev/nodeA-nodeB.log"
head -c 2097152 /dev/zero | tr '\0' x > "$work/iso-long/nodeA-nodeB.log"
row "isolate a directory holding a FIFO" - 0 null -- "$bin" isolate "$work/iso-fifo"
row "isolate a link to /dev/zero in the directory" - 0 null -- "$bin" isolate "$work/iso-dev"
row "isolate a log of one 2 MiB line" - 0 null -- "$bin" isolate "$work/iso-long"
row "isolate an empty directory" - 0 null -- "$bin" isolate "$work/iso-empty"
row "isolate /dev/zero" - 0 null -- "$bin" isolate /dev/zero
row "isolate --k -Inf" - 0 null -- "$bin" isolate --k -Inf "$work/iso-empty"
row "isolate --csv /dev/full" - 0 null -- "$bin" isolate --csv /dev/full isolate/testdata/cluster6
row "isolate > /dev/full" - 0 full -- "$bin" isolate isolate/testdata/cluster6
