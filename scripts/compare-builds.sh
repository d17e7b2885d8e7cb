#!/usr/bin/env bash
# Compares two builds of hccl-test (two git revisions) with benchstat: each
# is built, then the same sweep runs with each, alternately, and benchstat
# prints the per-row change with its significance.
#
#   scripts/compare-builds.sh OLD_REV [NEW_REV] [hccl-test flags...]
#   scripts/compare-builds.sh main HEAD -b 1K -e 16M --backend tcp -p 4
#
# NEW_REV defaults to the working tree. RUNS (default 10) is how many times
# each build runs the sweep (benchstat wants about 10). The two output files
# are kept in OUT (default a new temporary directory), named old.txt and
# new.txt, and can be compared again with `hccl-test compare`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
	sed -n '2,12p' "$0" >&2
	exit 2
fi
old_rev=$1
shift
new_rev=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	new_rev=$1
	shift
fi
runs="${RUNS:-10}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"

build() { # build REV DEST: builds hccl-test at REV (or the work tree) into DEST
	if [ -z "$1" ]; then
		go build -o "$2" ./cmd/hccl-test
		return
	fi
	local tree
	tree=$(mktemp -d)
	git worktree add --detach -q "$tree" "$1"
	(cd "$tree" && go build -o "$2" ./cmd/hccl-test)
	git worktree remove --force "$tree"
}
build "$old_rev" "$out/hccl-test-old"
build "$new_rev" "$out/hccl-test-new"

: > "$out/old.txt"
: > "$out/new.txt"
# Alternate the builds one sweep at a time, so that slow drift of the machine
# falls on both alike, in the order old-new, new-old, ...: which build of a
# pair ran first moved small rows as much as the changes measured (2-rank
# 1 KiB allreduce: unordered batches of the same two builds disagreed, ABBA
# over 20 pairs did not).
for i in $(seq "$runs"); do
	echo "run $i of $runs" >&2
	if ((i % 2 == 1)); then
		"$out/hccl-test-old" --link-bw 1GB/s "$@" --bench - >> "$out/old.txt"
		"$out/hccl-test-new" --link-bw 1GB/s "$@" --bench - >> "$out/new.txt"
	else
		"$out/hccl-test-new" --link-bw 1GB/s "$@" --bench - >> "$out/new.txt"
		"$out/hccl-test-old" --link-bw 1GB/s "$@" --bench - >> "$out/old.txt"
	fi
done

if ! command -v benchstat >/dev/null; then
	go install "golang.org/x/perf/cmd/benchstat@$(go list -m -f '{{.Version}}' golang.org/x/perf)"
	PATH="$(go env GOPATH)/bin:$PATH"
fi
echo "outputs in $out" >&2
benchstat "$out/old.txt" "$out/new.txt"
