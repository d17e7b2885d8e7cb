package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeRuns writes a Go benchmark file of ten runs of AllReduce at 1KiB
// and 1MiB on ranks ranks, 1000 and 80000 ns/op give or take 0.2%, the
// 1MiB row's time times slow1M; more rows and configuration lines may
// follow in extra.
func writeRuns(t *testing.T, dir, name string, ranks int, slow1M float64, extra string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "host: node%d\nranks: %d\n", ranks, ranks)
	for i := range 10 {
		j := 1 + 0.001*float64(i%3)
		fmt.Fprintf(&b, "BenchmarkAllReduce/ranks=%d/size=1KiB 20 %g ns/op %g busbw-GB/s\n", ranks, 1000*j, 1.75/j)
		fmt.Fprintf(&b, "BenchmarkAllReduce/ranks=%d/size=1MiB 20 %g ns/op %g busbw-GB/s\n", ranks, 80000*j*slow1M, 22.9/j/slow1M)
	}
	b.WriteString(extra)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareManyFiles runs compare over three and more files and with
// benchstat's flags, single dash or double: the exit status, the one
// line on stderr and what stdout must hold.
func TestCompareManyFiles(t *testing.T) {
	dir := t.TempDir()
	base := writeRuns(t, dir, "base.txt", 8, 1, "")
	same := writeRuns(t, dir, "same.txt", 8, 1.0005, "")
	slow := writeRuns(t, dir, "slow.txt", 8, 1.3, "")
	wide := writeRuns(t, dir, "wide.txt", 16, 1.02, "")
	eq := writeRuns(t, dir, "o=n.txt", 8, 1, "")
	both := writeRuns(t, dir, "both.txt", 8, 1, strings.Repeat("ranks: 16\nBenchmarkAllReduce/ranks=16/size=1KiB 20 1500 ns/op\n", 10))
	for _, tc := range []struct {
		name   string
		args   []string
		want   int
		stdout []string // each in stdout
		stderr string   // in stderr's one line; "" for none
	}{
		{"three files", []string{base, same, slow}, exitOK,
			[]string{"sec/op", "base.txt", "same.txt", "slow.txt", "AllReduce/ranks=8/size=1MiB", "+30.00% (p=0.000 n=10) worse"}, ""},
		{"three files, --threshold 5%", []string{"--threshold", "5%", base, same, slow}, exitRegressed, nil,
			"1 row got worse by more than 5%: first AllReduce/ranks=8/size=1MiB (sec/op +30.0%, " + slow + " against " + base + ")"},
		{"four files, the slow one filtered out", []string{"-threshold", "5%", "-filter", "-/size:1MiB", base, same, slow, same}, exitOK,
			[]string{"same.txt#2"}, ""},
		{"--filter=, --min-busbw on the last file", []string{"--filter=/size:1MiB", "--min-busbw", "20", base, same, slow}, exitRegressed, nil,
			"1 of 1 rows of " + slow + " have a bus bandwidth below --min-busbw 20: first AllReduce/ranks=8/size=1MiB"},
		{"LABEL=FILE", []string{"O=" + base, "N=" + slow}, exitOK, []string{"sec/op  ", "  O  ", "  N  vs base"}, ""},
		{"a file named with =", []string{eq, base}, exitOK, []string{"o=n.txt"}, ""},
		{"LABEL=FILE, no such file", []string{"O=" + base, "N=" + filepath.Join(dir, "none.txt")}, exitUsage, nil, "open " + filepath.Join(dir, "none.txt")},
		{"8 and 16 ranks", []string{base, wide}, exitUsage, nil,
			"have no row in common, so nothing was compared (" + base + ": 2 rows such as AllReduce/ranks=8/size=1KiB; " + wide +
				": 2 rows such as AllReduce/ranks=16/size=1KiB); they differ in /ranks: -ignore ranks compares them by the rest, -col ranks side by side"},
		{"8 and 16 ranks, -ignore ranks", []string{"-ignore", "ranks", "--threshold", "5%", base, wide}, exitOK,
			[]string{"AllReduce/size=1KiB ", "AllReduce/size=1MiB ", "+2.00% (p=0.000 n=10)"}, ""},
		{"8 and 16 ranks, -col ranks", []string{"-col", "ranks", base, wide}, exitOK, []string{"sec/op  ", "  8  ", "  16  vs base"}, ""},
		{"one file, -col ranks", []string{"-col", "ranks", "-filter", "/size:1KiB", both}, exitOK, []string{"AllReduce/size=1KiB  1.001µ ± 0%  1.500µ ± 0%  +49.85% (p=0.000 n=10) worse"}, ""},
		{"one file, -col /ranks -row .name", []string{"-col=/ranks", "-row=.name", "-filter", "/size:1KiB", both}, exitOK, []string{"AllReduce "}, ""},
		{"-table host", []string{"-table", "host", "-ignore", "ranks", base, wide}, exitUsage, nil,
			"no row is measured both in the first column of its table and in another, so nothing was compared"},
		{"benchstat's -format", []string{"-format", "csv", base, same}, exitUsage, nil, "-format: benchstat's -format is not taken: compare writes text"},
		{"benchstat's -confidence", []string{"--confidence=0.9", base, same}, exitUsage, nil, "--confidence=0.9: benchstat's -confidence is not taken: the intervals are at 0.95"},
		{"one file", []string{base}, exitUsage, nil, "want two files or more, OLD NEW..., or one with -col KEY to compare within it"},
		{"no file", nil, exitUsage, nil, "want two files or more"},
		{"-col one value", []string{"-col", "host", base, same}, exitUsage, nil, `every measurement falls in one column of -col "host"`},
		{"-filter matching nothing", []string{"-filter", "/size:2KiB", base, same}, exitUsage, nil, `-filter "/size:2KiB" kept no measurement of the 2 files`},
		{"-filter that does not parse", []string{"-filter", "/size:(1KiB", base, same}, exitUsage, nil, `-filter "/size:(1KiB": value list must be separated by OR at column 12`},
		{"an unknown key", []string{"-ignore", "rank", base, same}, exitUsage, nil, `-ignore "rank": unknown key rank: the rows have the name keys /ranks /size, the file keys host ranks`},
		{"an unknown name key", []string{"-row", "/dtype", base, same}, exitUsage, nil, `-row "/dtype": no row's name has a /dtype part`},
		{"a directory third", []string{base, same, dir}, exitUsage, nil, dir + ": is a directory, not a file"},
		{"a missing file third", []string{base, same, filepath.Join(dir, "none.txt")}, exitUsage, nil, "none.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"compare"}, tc.args...), &stdout, &stderr)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr %q\n%s", code, tc.want, stderr.String(), stdout.String())
			}
			if tc.stderr == "" && stderr.Len() > 0 || tc.stderr != "" && (strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.stderr)) {
				t.Errorf("stderr %q, want one line containing %q", stderr.String(), tc.stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
		})
	}
}

// TestBenchstatArgs checks the rewriting of benchstat's single-dash flags.
func TestBenchstatArgs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"-filter -/size:1KiB a b", "--filter -/size:1KiB a b"},
		{"-col=/ranks -row .name -ignore ranks a", "--col=/ranks --row .name --ignore ranks a"},
		{"--threshold 5% -alpha 0.01 -h a", "--threshold 5% --alpha 0.01 -h a"},
		{"-- -filter a", "-- -filter a"},
		{"-table -row a", "--table -row a"}, // the value of -table, whatever it is
	} {
		if got := strings.Join(benchstatArgs(strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("benchstatArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCompareClustersBySize compares a public nccl-tests log of 16 ranks
// with one of 8 ranks: refused by default with the way to compare them
// (no row in common), and side by side size by size with -col ranks or
// -ignore ranks: every size both logs measured, in both placements.
func TestCompareClustersBySize(t *testing.T) {
	const (
		eight   = "../../results/testdata/logs/nccl-tests-2.19.log"
		sixteen = "../../results/testdata/public/all_reduce_perf-16ranks.log"
	)
	sizes := []string{"8B", "64B", "512B", "4KiB", "32KiB", "256KiB", "2MiB", "16MiB", "128MiB"}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", eight, sixteen}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "they differ in /ranks: -ignore ranks compares them by the rest, -col ranks side by side") {
		t.Errorf("no flags: exit %d, stderr %q", code, stderr.String())
	}
	for _, args := range [][]string{{"-col", "ranks"}, {"-ignore", "ranks"}, {"-ignore", "/ranks,ranks", "-filter", ".unit:busbw-GB/s"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout.Reset()
			stderr.Reset()
			if code := run(append(append([]string{"compare"}, args...), eight, sixteen), &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			units := strings.Count(stdout.String(), " vs base\n")
			if want := map[bool]int{true: 3, false: 1}[len(args) == 2]; units != want {
				t.Errorf("%d tables, want %d:\n%s", units, want, stdout.String())
			}
			for _, size := range sizes {
				for _, place := range []string{"", "/inplace=true"} {
					row := "AllReduce/backend=nccl/dtype=fp32/redop=sum/size=" + size + place + " "
					if n := strings.Count(stdout.String(), "\n"+row); n != units {
						t.Errorf("row %q in %d tables, want %d", row, n, units)
					}
				}
			}
			if args[1] == "ranks" && args[0] == "-col" && !regexp.MustCompile(`(?m)^sec/op +8 +16 +vs base$`).MatchString(stdout.String()) {
				t.Errorf("-col ranks: no header of 8 and 16 ranks:\n%s", stdout.String())
			}
		})
	}
}
