#!/usr/bin/env bash
# Plots bus bandwidth against message size from a CSV written by
# `hccl-test --csv`, with gnuplot, into a PNG: one line per op/dtype/backend,
# sizes on a log-2 axis labelled in binary units (1KiB, 4KiB, ... 64MiB).
# Rows of one line and size (runs of a sweep repeated with --runs, and rows
# that differ only in columns the line does not name: redop, in-place,
# ranks, algo) are pooled into their median. When every row gives the same
# link bandwidth, a dashed line marks it. For time against size too, and
# SVG, use the Go package results/plot.
#
#   scripts/plot-csv.sh results.csv busbw.png
#   hccl-test --op allreduce,allgather -b 1K -e 64M --runs 5 --csv r.csv && scripts/plot-csv.sh r.csv r.png
#
# Needs gnuplot; when it is missing and this runs as root on Debian, it runs
# apt-get install gnuplot-nox.
set -euo pipefail

die() {
	echo "plot-csv: $*" >&2
	exit 1
}

[[ $# == 2 ]] || die "usage: $0 results.csv out.png"
csv=$1
out=$2
[[ -r $csv ]] || die "$csv: cannot read it"
[[ $out == *.png ]] || die "$out: the output must be a .png file"

if ! command -v gnuplot >/dev/null; then
	[[ $(id -u) == 0 ]] || die "gnuplot is missing; install it (Debian: apt-get install gnuplot-nox), or run this as root to have it done"
	command -v apt-get >/dev/null || die "gnuplot is missing and there is no apt-get to install it"
	echo "plot-csv: installing gnuplot-nox" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt-get install -y -qq gnuplot-nox >/dev/null || die "apt-get install gnuplot-nox failed"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Pass 1 (awk): one line "series size busbw" per row, the series numbered
# in the order they first appear; their names go to names.txt, the link
# bandwidth, if all rows agree on one, to link.txt, and the top of the y
# axis, above the highest bandwidth and the link, to ymax.txt, and the x
# axis range and tics to xaxis.gp. Columns are found by name in the header row (repeated headers of concatenated files
# are fine); fields are split as RFC 4180 quotes them, since link_source
# holds commas.
awk -v names="$tmp/names.txt" -v linkf="$tmp/link.txt" -v ymaxf="$tmp/ymax.txt" -v xaxisf="$tmp/xaxis.gp" '
function splitcsv(s, f,    n, i, c, q, v) {
	n = 0; v = ""; q = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (q) {
			if (c != "\"") v = v c
			else if (substr(s, i + 1, 1) == "\"") { v = v c; i++ }
			else q = 0
		} else if (c == "\"") q = 1
		else if (c == ",") { f[++n] = v; v = "" }
		else v = v c
	}
	f[++n] = v
	return n
}
# sizelabel formats 2^e bytes: 512B, 1KiB, 4KiB, ... 1MiB, ...
function sizelabel(e,    u) {
	u = int(e / 10)
	if (u > 5) u = 5
	return sprintf("%.0f", 2 ^ (e - 10 * u)) (u ? substr("KMGTP", u, 1) "iB" : "B")
}
{ sub(/\r$/, "") }
$0 == "" { next }
{ n = splitcsv($0, f) }
f[1] == "schema_version" {
	split("", col)
	for (i = 1; i <= n; i++) col[f[i]] = i
	split("op dtype backend size_bytes busbw_GBps", need, " ")
	for (i = 1; i in need; i++)
		if (!(need[i] in col)) { print "plot-csv: the header has no " need[i] " column" > "/dev/stderr"; bad = 1; exit 1 }
	next
}
!("op" in col) { print "plot-csv: line " NR ": no header row before it; is this a CSV from hccl-test --csv?" > "/dev/stderr"; bad = 1; exit 1 }
{
	size = f[col["size_bytes"]]; bw = f[col["busbw_GBps"]]
	if (size + 0 <= 0 || bw == "") next # a log axis has no 0; unknown bandwidth
	name = f[col["op"]] " " f[col["dtype"]] " " f[col["backend"]]
	if (!(name in id)) { id[name] = ++series; print series "\t" name > names }
	print id[name] "\t" size "\t" bw
	if (bw + 0 > top) top = bw + 0
	if (!rows || size + 0 < xmin) xmin = size + 0
	if (size + 0 > xmax) xmax = size + 0
	if ("link_GBps" in col) {
		l = f[col["link_GBps"]]
		if (l == "" || (link != "" && l != link)) nolink = 1
		else link = l
	}
	rows++
}
END {
	if (bad) exit 1
	if (!rows) { print "plot-csv: no rows with a size and a bus bandwidth" > "/dev/stderr"; exit 1 }
	if (link != "" && !nolink) { print link > linkf; if (link + 0 > top) top = link + 0 }
	print (top > 0 ? top * 1.1 : 1) > ymaxf
	# A tic at every power of two, labelled every 1st, 2nd, 5th or 10th
	# power, whichever keeps the labels to 12; half a power of two of room
	# either side.
	lo = log(xmin) / log(2); lo = int(lo) + (lo > int(lo) + 1e-9)
	hi = int(log(xmax) / log(2) + 1e-9)
	split("1 2 5 10", steps, " ")
	for (i = 1; i <= 4; i++) { step = steps[i]; if (int((hi - lo) / step) + 1 <= 12) break }
	tics = ""
	for (e = lo; e <= hi; e++)
		tics = tics (tics == "" ? "" : ", ") (e % step ? "\"\"" : "\"" sizelabel(e) "\"") sprintf(" %.0f %d", 2 ^ e, e % step != 0)
	printf "set xrange [%.17g:%.17g]\nset xtics (%s)\n", xmin / sqrt(2), xmax * sqrt(2), tics > xaxisf
}' "$csv" >"$tmp/rows.tsv"

# Pass 2: sort by series, size and bandwidth, and write each series' median
# per size to its own data file.
sort -t $'\t' -k1,1n -k2,2n -k3,3g "$tmp/rows.tsv" | awk -v dir="$tmp" '
function flush(    m) {
	if (!n) return
	m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	print size "\t" m > (dir "/s" s ".dat")
	n = 0
}
$1 != s || $2 != size { flush(); s = $1; size = $2 }
{ v[++n] = $3 }
END { flush() }'

plots=()
while IFS=$'\t' read -r id name; do
	plots+=("'$tmp/s$id.dat' using 1:2 with linespoints lw 2 pt $((id % 12 + 1)) ps 0.8 title '${name//\'/}'")
done <"$tmp/names.txt"
link=$(cat "$tmp/link.txt" 2>/dev/null || true)
ymax=$(cat "$tmp/ymax.txt")

term="png size 1000,650 font ',11'"
if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
	term="pngcairo size 1000,650 font 'sans,11'"
fi
title="hccl-test bus bandwidth: $(basename "$csv")"
{
	echo "set terminal $term"
	echo "set output '${out//\'/}'"
	echo "set title '${title//\'/}' noenhanced"
	echo "set xlabel 'message size (bytes)'"
	echo "set ylabel 'bus bandwidth (GB/s)'"
	echo "set logscale x 2"
	cat "$tmp/xaxis.gp"
	echo "set yrange [0:$ymax]"
	echo "set grid xtics ytics"
	echo "set key top left box opaque noenhanced"
	if [[ -n $link ]]; then
		echo "set arrow from graph 0, first $link to graph 1, first $link nohead dashtype 2 lw 1.5 lc rgb 'gray40'"
		echo "set label 'link $(printf '%.3g' "$link") GB/s' at graph 0.99, first $link right offset 0, 0.7 textcolor rgb 'gray40'"
	fi
	echo "plot $(IFS=,; echo "${plots[*]}")"
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp" || die "gnuplot failed"
echo "plot-csv: wrote $out" >&2
