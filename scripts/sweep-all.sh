#!/usr/bin/env bash
# Sweeps every collective with every data type and reduction on the
# in-process backend, in-place and out-of-place, from every root, and fails
# if any result is wrong. Extra arguments go to hccl-test, e.g.
#
#   scripts/sweep-all.sh -p 5 -e 4M
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o hccl-test ./cmd/hccl-test
./hccl-test --op all --datatype all --redop all --placement both --root -1 \
	-b 1 -e 1M -f 8 -n 5 -w 1 --link-bw auto "$@"
