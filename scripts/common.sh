# Sourced by the measurement scripts. It sets repo (the repository), work
# (a scratch directory, removed on exit unless KEEP=1) and bin (the
# hccl-test to measure: HCCL_TEST if set, else one built from repo).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=${KEEP:-0}
work=$(mktemp -d)
cleanup() { if [ "$KEEP" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi; }
trap cleanup EXIT

bin=${HCCL_TEST:-}
if [ -z "$bin" ]; then
	bin=$work/hccl-test
	(cd "$repo" && go build -o "$bin" ./cmd/hccl-test)
fi
