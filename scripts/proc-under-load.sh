#!/usr/bin/env bash
# proc against tcp on a host whose CPUs other work keeps busy: a hog of
# HOG busy loops (default 4) runs while the allreduce of 1 KiB, 64 KiB and
# 1 MiB is timed at 2, 4 and 8 ranks on each backend, RUNS times (default
# 5) in turn, and the median time of each row is printed. With two builds
# (OLD and NEW, paths of hccl-test binaries) both run, interleaved
# old-new, new-old, ..., so that drift of the host falls on both alike.
# HOG=0 measures the host as it is.
#
#   scripts/proc-under-load.sh                      # the build of this tree
#   OLD=/path/old NEW=/path/new scripts/proc-under-load.sh
#
# Prints one line per build, backend, ranks and size: the median time (us)
# of its RUNS runs, and their min and max.
set -euo pipefail
# shellcheck source=common.sh
HCCL_TEST=${NEW:-${HCCL_TEST:-}} source "$(dirname "$0")/common.sh"
hog=${HOG:-4}
runs=${RUNS:-5}
ranks_list=${RANKS:-"2 4 8"}
builds=("new=$bin")
if [ -n "${OLD:-}" ]; then
	builds=("old=$OLD" "new=$bin")
fi

pids=()
stop_hog() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'stop_hog; cleanup' EXIT
for _ in $(seq "$hog"); do
	(while :; do :; done) &
	pids+=($!)
done

out=$work/times.txt
: > "$out"
for i in $(seq "$runs"); do
	order=("${builds[@]}")
	if ((i % 2 == 0)) && [ ${#builds[@]} = 2 ]; then
		order=("${builds[1]}" "${builds[0]}")
	fi
	for p in $ranks_list; do
		for be in proc tcp; do
			for b in "${order[@]}"; do
				name=${b%%=*}
				exe=${b#*=}
				# 1K, 4K, ..., 1M; the rows of 1K, 64K and 1M are kept.
				"$exe" --backend "$be" -p "$p" -b 1K -e 1M -f 4 -n 50 -w 5 --link-bw 1GB/s -T 2m 2>/dev/null |
					awk -v n="$name" -v be="$be" -v p="$p" \
						'$1 == 1024 || $1 == 65536 || $1 == 1048576 { print n, be, p, $1, $7 }' >> "$out"
			done
		done
	done
	echo "run $i of $runs" >&2
done
stop_hog
echo "# build backend ranks size(B) median(us) min max   (hog of $hog busy loops, $runs runs)"
sort -k1,1 -k2,2 -k3,3n -k4,4n "$out" | awk "$AWK_MEDIAN"'
	{ k = $1 " " $2 " " $3 " " $4; v[k] = v[k] " " $5
	  if (!(k in lo) || $5 < lo[k]) lo[k] = $5; if (!(k in hi) || $5 > hi[k]) hi[k] = $5
	  if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } }
	END { for (i = 1; i <= nk; i++) { k = keys[i]; printf "%-22s %10.1f %10.1f %10.1f\n", k, median(v[k]), lo[k], hi[k] } }'
