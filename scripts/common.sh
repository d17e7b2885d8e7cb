# Sourced by the measurement scripts. It sets AWK_MEDIAN (an awk function,
# median(list), of a space-separated list of numbers, to put in front of
# an awk program), repo (the repository), work (a scratch directory,
# removed on exit unless KEEP=1) and bin (the hccl-test to measure:
# HCCL_TEST if set, else one built from repo).
# shellcheck disable=SC2016
AWK_MEDIAN='function median(list,   v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++) { t = v[i] + 0; j = i - 1
		while (j > 0 && v[j] + 0 > t) { v[j + 1] = v[j]; j-- }
		v[j + 1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
'

# A script that only reads earlier results sources this with
# COMMON_AWK_ONLY=1: AWK_MEDIAN, and no scratch directory nor build.
if [ "${COMMON_AWK_ONLY:-0}" = 1 ]; then
	return 0
fi

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

