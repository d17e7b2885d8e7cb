#!/usr/bin/env bash
# Runs the Go benchmarks that measure speed: the reduce kernels next to
# copy() on the same buffers (GB/s), and one allreduce per size band with
# every algorithm on 8 in-process ranks. The output is Go benchmark format:
# save two runs and compare them with benchstat.
#
#   scripts/bench.sh > new.txt
#   COUNT=10 scripts/bench.sh > new.txt && benchstat old.txt new.txt
set -euo pipefail
cd "$(dirname "$0")/.."
count="${COUNT:-3}"
go test -run '^$' -bench 'Reduce|Copy' -benchtime 10x -count "$count" ./dtype
go test -run '^$' -bench 'AllReduce' -benchtime 20x -count "$count" ./coll
