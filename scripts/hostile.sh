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
# after the delay the row gives. The table is markdown, on stdout.
set -uo pipefail
cd "$(dirname "$0")/.."

LIMIT=${LIMIT:-90}
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

# row NAME SIGNAL DELAY STDOUT -- ARGS...: runs one command. SIGNAL is "-"
# for none; STDOUT is "null", "file", "full", "closed", "pipe" (a pipe
# nobody reads) or "head" (a pipe closed after 34 lines).
row() {
	local name=$1 sig=$2 delay=$3 out=$4
	shift 5
	local tf=$work/time.$$
	rm -f "$tf"
	(
		ulimit -v "$CAP_KB"
		case $out in
		null) exec /usr/bin/time -o "$tf" -f '%e %M %x' timeout -k 5 "$LIMIT" "$@" >/dev/null 2>"$work/err" ;;
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
	printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$code" "$wall" "$((${rss:-0} / 1024))" "$lines" "${msg:-}"
}

echo "| case | exit | wall (s) | peak RSS (MiB) | stderr lines | first stderr line |"
echo "|---|---|---|---|---|---|"
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

# class 3: rows lost on the way out
row "--csv --json | head -34" - 0 head -- "$bin" -b 1K -e 64M --csv "$work/h.csv" --json "$work/h.json"
row "--csv /dev/full -b 1K -e 1M" - 0 file -- "$bin" -b 1K -e 1M --csv /dev/full
row "SIGHUP at 1 s (shm -e 256M)" HUP 1 null -- "$bin" -b 1K -e 256M --csv "$work/hup.csv"
row "sim -p 8 -e 128M, SIGINT at 2 s" INT 2 null -- "$bin" --backend sim -p 8 -b 1K -e 128M --csv "$work/sim.csv"
row "SIGPIPE at 1 s (tcp -p 2)" PIPE 1 null -- "$bin" --backend tcp -p 2 -b 1K -e 64M --csv "$work/pipe.csv"
row "-N 0 | head -34, SIGTERM never needed" - 0 head -- "$bin" -N 0 -b 1K -e 64K --csv "$work/n0.csv"
row "stdout /dev/full with --csv" - 0 full -- "$bin" -b 1K -e 1M --csv "$work/full.csv"

# class 7: outputs that collide
row "--csv FILE 2> FILE" - 0 null -- "$bin" -b 1K -e 1K --csv "$work/err"
row "--json /dev/stderr, stderr a file" - 0 null -- "$bin" -b 1K -e 1K --json /dev/stderr
ln -sf err "$work/errlink"
row "--bench a link to stderr's file" - 0 null -- "$bin" -b 1K -e 1K --bench "$work/errlink"
row "--csv /proc/self/fd/2" - 0 null -- "$bin" -b 1K -e 1K --csv /proc/self/fd/2
"$bin" -b 1K -e 64M -n 200 --csv "$work/held.csv" >/dev/null 2>&1 &
held=$!
sleep 1
row "a second run on one --csv" - 0 null -- "$bin" -b 1K -e 1K --csv "$work/held.csv"
row "a second run, its --json on the first's --csv" - 0 null -- "$bin" -b 1K -e 1K --json "$work/./held.csv"
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null

# class 9: an output FIFO without a reader
row "--csv FIFO nobody reads, no signal" - 0 null -- "$bin" -b 1K -e 4K --csv "$work/fifo"
