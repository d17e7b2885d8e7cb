#!/usr/bin/env bash
# Pools several kept runs of scripts/vs-peers.sh (KEEP=1 prints each run's
# directory) and tests each target against every repetition of them: a
# repetition runs every side of a row within seconds, so each is one
# side-by-side comparison, and across runs there are enough of them for a
# sign test. Per row and pair of sides it prints how many repetitions met
# the target (ours no slower than the peer; proc at most 1.25x shm), the
# two-sided sign test's p of so many out of so many, and the median and
# range of the repetitions' ratios (the peer's time / ours).
#
#   scripts/vs-peers-pool.sh DIR [DIR...]
#
# Where one run's best-of-N table says a target was missed by a few
# percent, this says whether that was the host's noise (the repetitions
# split evenly, or mostly meet it) or a real gap (most miss it).
set -euo pipefail

if [ $# -lt 1 ]; then
	sed -n '2,15p' "$0" >&2
	exit 2
fi
for d in "$@"; do
	[ -f "$d/results.txt" ] || { echo "vs-peers-pool: $d: no results.txt (a directory vs-peers.sh kept)" >&2; exit 2; }
done

# shellcheck source=common.sh
COMMON_AWK_ONLY=1 source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

for i in $(seq 1 $#); do
	awk -v run="$i" '{ print run, $0 }' "${!i}/results.txt"
done | awk "$AWK_MEDIAN"'
	# run op ranks size side rep time_us
	{ t[$2 SUBSEP $3 SUBSEP $4 SUBSEP $5 SUBSEP $1 SUBSEP $6] = $7 + 0; reps[$1 SUBSEP $6] = 1 }
	function label(s) { return s >= 1048576 ? s / 1048576 "M" : s >= 1024 ? s / 1024 "K" : s }
	# signp(k, n): two-sided sign test, k of n.
	function signp(k, n,   j, p, tail, m) {
		m = k < n - k ? k : n - k
		p = 0.5 ^ n
		for (j = 0; j <= m; j++) { tail += p; p = p * (n - j) / (j + 1) }
		return 2 * tail > 1 ? 1 : 2 * tail
	}
	function pool(op, n, size, peer, ours, factor, what,   r, a, b, k, met, both, ratios, lo, hi, x) {
		lo = 1e300; hi = 0
		for (r in reps) {
			a = op SUBSEP n SUBSEP size SUBSEP peer SUBSEP r
			b = op SUBSEP n SUBSEP size SUBSEP ours SUBSEP r
			if (!(a in t) || !(b in t) || t[b] <= 0) continue
			both++
			if (t[b] <= factor * t[a]) met++
			x = t[a] / t[b]
			ratios = ratios " " x
			if (x < lo) lo = x
			if (x > hi) hi = x
		}
		if (!both) return
		printf "%-13s %5d %5s %-16s %6s %7.3f %7.2f  %.2f-%.2f\n", op, n, label(size), ours " vs " peer what,
			met + 0 "/" both, signp(met + 0, both), median(ratios), lo, hi
	}
	END {
		printf "%-13s %5s %5s %-16s %6s %7s %7s  %s\n", "op", "ranks", "size", "sides", "met", "sign p", "median", "range (peer / ours)"
		split("1024 1048576 67108864", sizes, " ")
		for (n = 2; n <= 8; n += 6)
			for (s = 1; s <= 3; s++) {
				pool("allreduce", n, sizes[s], "vader", "shm", 1, "")
				pool("allreduce", n, sizes[s], "vader", "proc", 1, "")
				pool("allreduce", n, sizes[s], "shm", "proc", 1.25, " *")
				pool("allreduce", n, sizes[s], "mpitcp", "tcp", 1, "")
				pool("allreduce", n, sizes[s], "gloo", "tcp", 1, "")
			}
		split("allgather reducescatter broadcast alltoall", ops, " ")
		for (o = 1; o <= 4; o++) {
			pool(ops[o], 8, 67108864, "vader", "shm", 1, "")
			pool(ops[o], 8, 67108864, "vader", "proc", 1, "")
			pool(ops[o], 8, 67108864, "mpitcp", "tcp", 1, "")
			pool(ops[o], 8, 67108864, "gloo", "tcp", 1, "")
		}
		print "# met: repetitions where ours took no longer than the peer (* proc at most 1.25x shm: within 25%)"
	}'
