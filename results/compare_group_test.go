package results

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeRanks writes recs as a --bench file of a run on ranks ranks.
func writeRanks(t *testing.T, dir, file string, ranks int, recs []Record) string {
	t.Helper()
	var buf bytes.Buffer
	h := Header{Version: "0.1.0", Backend: "shm", Ranks: ranks, Algo: "auto", Placement: "out", Check: true,
		Started: time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC), Host: "node01"}
	writeAll(t, NewBenchFmt(&buf), h, recs)
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// groupFiles are four runs of cmpRows, ten times each: base and same on 8
// ranks, slow on 8 ranks and 30% slower at 1MiB, wide on 16 ranks and 50%
// slower everywhere.
func groupFiles(t *testing.T) (dir string, files map[string]string) {
	dir = t.TempDir()
	files = map[string]string{
		"base": writeRanks(t, dir, "base.txt", 8, sweep(10, 0, nil)),
		"same": writeRanks(t, dir, "same.txt", 8, sweep(10, 0.5, nil)),
		"slow": writeRanks(t, dir, "slow.txt", 8, sweep(10, 0.5, map[int]float64{1: 1.3})),
		"wide": writeRanks(t, dir, "wide.txt", 16, sweep(10, 0.5, map[int]float64{0: 1.5, 1: 1.5, 2: 1.5, 3: 1.5})),
	}
	return dir, files
}

// groupCase is one grouping, given to compare and, spelled as benchstat
// needs it, to benchstat.
type groupCase struct {
	name      string
	files     []string // keys of groupFiles
	g         Grouping
	benchstat []string // benchstat's flags for the same grouping
	rows      int      // rows of each unit's table
}

var groupCases = []groupCase{
	{name: "three files", files: []string{"base", "same", "slow"}, g: DefaultGrouping(), rows: 4},
	{name: "four files, -ignore ranks", files: []string{"base", "same", "slow", "wide"}, g: Grouping{Ignore: "ranks"},
		benchstat: []string{"-ignore", "ranks,/ranks"}, rows: 4},
	{name: "-filter on size and op", files: []string{"base", "slow", "same"},
		g: Grouping{Filter: "/size:(1MiB OR 64MiB) .name:AllReduce"}, benchstat: []string{"-filter", "/size:(1MiB OR 64MiB) .name:AllReduce"}, rows: 2},
	{name: "-filter on a file key, negated", files: []string{"base", "slow", "wide"},
		g: Grouping{Filter: "-ranks:16 /size:1MiB"}, benchstat: []string{"-filter", "-ranks:16 /size:1MiB"}, rows: 2},
	{name: "-col ranks", files: []string{"base", "wide"}, g: Grouping{Col: "ranks"},
		benchstat: []string{"-col", "/ranks", "-ignore", "ranks"}, rows: 4},
	{name: "-col ranks, -row size in number order", files: []string{"slow", "wide"}, g: Grouping{Col: "ranks", Row: "/size@num", Filter: ".name:AllReduce"},
		benchstat: []string{"-col", "/ranks", "-ignore", "ranks", "-row", "/size@num", "-filter", ".name:AllReduce"}, rows: 3},
	{name: "-row .name over files, the sizes merged", files: []string{"base", "slow", "same"}, g: Grouping{Row: ".name"},
		benchstat: []string{"-row", ".name"}, rows: 2},
	{name: "-col .file in a fixed order", files: []string{"base", "slow", "same"}, g: Grouping{Col: ".file@(same.txt slow.txt)"},
		benchstat: []string{"-col", ".file@(same.txt slow.txt)"}, rows: 4},
	{name: "-table by .name", files: []string{"base", "slow"}, g: Grouping{Table: ".name", Row: "/size"},
		benchstat: []string{"-table", ".name", "-row", "/size"}, rows: 0}, // tables of 3 and 1 rows
}

// TestCompareFilesLikeBenchstat groups three and four --bench files with
// -filter, -row, -col, -ignore and -table, and wants each table's rows,
// their cells and the columns as the real benchstat makes them of the
// same files (skipped where benchstat is not installed), and, in any
// case, the rows each case must have.
func TestCompareFilesLikeBenchstat(t *testing.T) {
	benchstat, _ := exec.LookPath("benchstat")
	dir, files := groupFiles(t)
	for _, tc := range groupCases {
		t.Run(tc.name, func(t *testing.T) {
			var in []*Samples
			var paths []string
			for _, f := range tc.files {
				s, err := ReadSamples(files[f])
				if err != nil {
					t.Fatal(err)
				}
				in = append(in, s)
				paths = append(paths, filepath.Base(files[f]))
			}
			// Labelled by the base names, as benchstat run in dir labels them.
			for i, s := range in {
				s.Path = paths[i]
			}
			res, err := CompareFiles(in, tc.g, CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range cmpUnits {
				var tables []*CompareTable
				for _, tab := range res.Tables {
					if tab.Unit == u {
						tables = append(tables, tab)
					}
				}
				if len(tables) == 0 {
					t.Fatalf("no %s table", u)
				}
				var out bytes.Buffer
				if err := writeTables(&out, tables); err != nil {
					t.Fatal(err)
				}
				ours := cmpTableRows(out.String())
				if tc.rows > 0 && len(ours) != tc.rows {
					t.Errorf("%s: %d rows, want %d:\n%s", u, len(ours), tc.rows, out.String())
				}
				if benchstat == "" {
					continue
				}
				args := append(slices.Clone(tc.benchstat), "-table", tc.g.Table)
				filter := cmpOrStar(tc.g.Filter)
				for i := 0; i+1 < len(args); i++ {
					if args[i] == "-filter" {
						filter = args[i+1]
						args = slices.Delete(args, i, i+2)
						break
					}
				}
				args = append(args, "-filter", "("+filter+") .unit:"+u)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, benchstat, append(args, paths...)...)
				cmd.Dir = dir
				bs, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("benchstat %q: %v\n%s", args, err, bs)
				}
				theirs := cmpTableRows(string(bs))
				// benchstat also lists rows with no baseline, with no test.
				for label, cells := range theirs {
					if !strings.Contains(cells, "(p=") {
						delete(theirs, label)
					}
				}
				if len(ours) != len(theirs) {
					t.Errorf("%s: %d rows, benchstat %d\nours:\n%s\nbenchstat %q:\n%s", u, len(ours), len(theirs), out.String(), args, bs)
				}
				for label, cells := range ours {
					if theirs[label] != cells {
						t.Errorf("%s row %q:\nours       %q\nbenchstat  %q", u, label, cells, theirs[label])
					}
				}
				if got, want := columnLabels(out.String()), columnLabels(string(bs)); !slices.Equal(got, want) {
					t.Errorf("%s: columns %q, benchstat %q", u, got, want)
				}
			}
		})
	}
}

func cmpOrStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// cmpTableRows returns the rows of comparison tables, ours or benchstat's,
// by label (the table's key before it, where there is one), with their
// cells separated by one space, without benchstat's footnote marks and
// our "worse".
func cmpTableRows(text string) map[string]string {
	rows := map[string]string{}
	table := ""
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && strings.HasPrefix(f[0], ".name:") {
			table = f[0] // our table key line
		}
		if len(f) == 2 && f[0] == ".name:" {
			table = ".name:" + f[1] // benchstat's
		}
		if len(f) < 2 || !strings.Contains(l, "±") || strings.Contains(l, "│") || f[0] == "geomean" {
			continue
		}
		cells := slices.DeleteFunc(f[1:], func(c string) bool {
			return c == "worse" || strings.Trim(c, "¹²³⁴⁵⁶⁷⁸⁹⁰") == ""
		})
		rows[table+" "+f[0]] = strings.Join(cells, " ")
	}
	return rows
}

// columnLabels returns the column labels of the first table in text: our
// header line's words other than the unit and "vs base", or benchstat's
// first line boxed by │.
func columnLabels(text string) []string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "│") {
			var labels []string
			for _, c := range strings.Split(l, "│")[1:] {
				if c = strings.TrimSpace(c); c != "" {
					labels = append(labels, c)
				}
			}
			return labels
		}
		if strings.Contains(l, "vs base") {
			f := strings.Fields(strings.ReplaceAll(l, "vs base", ""))
			return f[1:]
		}
	}
	return nil
}

// TestCompareFilesRefuses wants each expression that does not parse, and
// each key that no row of the files has, refused with one line that
// names the flag, and nothing compared.
func TestCompareFilesRefuses(t *testing.T) {
	_, files := groupFiles(t)
	var in []*Samples
	for _, f := range []string{"base", "slow", "wide"} {
		s, err := ReadSamples(files[f])
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, s)
	}
	for _, tc := range []struct {
		g    Grouping
		want string
	}{
		{Grouping{Filter: "/size:("}, `-filter "/size:(": expected value at column 8`},
		{Grouping{Filter: "/size:1MiB)"}, `-filter "/size:1MiB)": unexpected ")" at column 11`},
		{Grouping{Filter: `host:"node`}, `-filter "host:\"node": missing end quote at column 6`},
		{Grouping{Filter: "/size:/[/"}, `-filter "/size:/[/": missing close "/" at column 7`},
		{Grouping{Filter: ".config:x"}, `-filter ".config:x": .config is only allowed in projections`},
		{Grouping{Col: ".unit"}, `-col ".unit": .unit is only allowed in filters`},
		{Grouping{Row: "/size@(1MiB"}, `-row "/size@(1MiB": missing )`},
		{Grouping{Row: "/size@bogus"}, `-row "/size@bogus": unknown order "bogus"`},
		{Grouping{Table: ".config@(a)"}, `-table ".config@(a)": fixed order not allowed for .config`},
		{Grouping{Col: "rank"}, `-col "rank": unknown key rank: the rows have the name keys /backend /dtype /ranks /redop /root /size, the file keys algo backend goarch goos host placement ranks`},
		{Grouping{Ignore: "/rank"}, `-ignore "/rank": no row's name has a /rank part`},
		{Grouping{Filter: "hots:node01"}, `-filter "hots:node01": unknown key hots`},
		{Grouping{Filter: "-/algo:ring"}, `-filter "-/algo:ring": no row's name has a /algo part`},
		{Grouping{Row: ".names"}, `-row ".names": unknown key .names`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := CompareFiles(in, tc.g, CompareOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%+v: error %v, want one line containing %q", tc.g, err, tc.want)
			}
		})
	}
}

// TestResolveKeys checks which keys of an expression are found, and how
// a bare key that the rows' names carry is rewritten.
func TestResolveKeys(t *testing.T) {
	k := fileKeys{name: map[string]bool{"ranks": true, "size": true, "dtype": true}, config: map[string]bool{"ranks": true, "host": true}}
	for _, tc := range []struct {
		in, want [5]string // by groupFlags
	}{
		{[5]string{"ranks:8 dtype:fp16", "", ".fullname", ".file", "ranks"}, [5]string{"ranks:8 /dtype:fp16", "", ".fullname", ".file", "/ranks,ranks"}},
		{[5]string{`-host:"a b" OR size:/^1(K|M)iB$/`, "", "size@num", "ranks@(8 16)", ""}, [5]string{`-host:"a b" OR /size:/^1(K|M)iB$/`, "", "/size@num", "/ranks@(8 16)", "ranks"}},
		{[5]string{"dtype:(fp16 OR fp32) AND -(/size:1MiB)", "host", ".name,dtype", ".file", ""}, [5]string{"/dtype:(fp16 OR fp32) AND -(/size:1MiB)", "host", ".name,/dtype", ".file", ""}},
	} {
		got, err := k.resolve(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestNameKeysApart checks the keys named for rows that no file shares.
func TestNameKeysApart(t *testing.T) {
	a := []string{"AllReduce/backend=shm/ranks=8/size=1KiB", "AllReduce/backend=shm/ranks=8/size=1MiB"}
	b := []string{"AllReduce/backend=shm/ranks=16/size=1MiB"}
	if got := NameKeysApart(a, b); !slices.Equal(got, []string{"/ranks"}) {
		t.Errorf("NameKeysApart = %q, want [/ranks]", got)
	}
	if got := NameKeysApart(a, []string{"AllGather/backend=shm/ranks=16/size=1MiB"}); len(got) != 0 {
		t.Errorf("NameKeysApart of other collectives = %q, want none", got)
	}
}

// TestCompareFilesMixed compares a run's CSV, the same run's --bench file
// and a slower run's --bench file as three columns: the CSV and the Go
// benchmark lines of one run agree, and the slower run is worse.
func TestCompareFilesMixed(t *testing.T) {
	dir := t.TempDir()
	recs, slow := sweep(10, 0, nil), sweep(10, 0.5, map[int]float64{1: 1.3})
	csv := writeSweep(t, dir, "run.csv", csvSink, recs)
	bench := writeSweep(t, dir, "run.txt", benchSink, recs)
	slower := writeSweep(t, dir, "slow.txt", benchSink, slow)
	var in []*Samples
	for _, p := range []string{csv, bench, slower} {
		s, err := ReadSamples(p)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, s)
	}
	res, err := CompareFiles(in, Grouping{Filter: ".unit:sec/op"}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) != 1 || !slices.Equal(res.Tables[0].Cols, []string{csv, bench, slower}) || len(res.Tables[0].Rows) != len(cmpRows) {
		t.Fatalf("tables %+v, want one of 3 columns and %d rows", res.Tables, len(cmpRows))
	}
	for i, r := range res.Tables[0].Rows {
		same, other := r.Cells[0], r.Cells[1]
		if r.Name != cmpRows[i].name || same.Significant || same.Delta > 1e-4 || same.Delta < -1e-4 {
			t.Errorf("%s: the CSV and the Go benchmark lines of one run differ: %+v", r.Name, same)
		}
		if want := i == 1; other.Significant != want || other.Significant && !other.Worse {
			t.Errorf("%s against the slower run: significant %v worse %v, want %v", r.Name, other.Significant, other.Worse, want)
		}
	}
	// Host and ranks are file keys of both formats.
	for _, tc := range []struct {
		filter string
		rows   int // kept of each file
	}{{"host:node01 ranks:8", 3 * len(cmpRows)}, {"host:node02", 0}, {"backend:shm /size:1MiB", 2 * 3}} {
		res, err := CompareFiles(in, Grouping{Filter: tc.filter}, CompareOptions{})
		if err != nil {
			t.Fatalf("-filter %q: %v", tc.filter, err)
		}
		for _, f := range res.Files {
			if f.Rows() != tc.rows {
				t.Errorf("-filter %q kept %d rows of %s, want %d", tc.filter, f.Rows(), f.Path, tc.rows)
			}
		}
	}
}
