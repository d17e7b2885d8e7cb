package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestFasterThanLinkMarked: a row above 100% util gets the mark in the
// table, true in faster_than_link in CSV and JSON, and the header and the
// footer say what the mark means and how many rows carry it; rows at or
// below 100%, or of unknown util, do not.
func TestFasterThanLinkMarked(t *testing.T) {
	h := header("out", false)
	slow, fast, unknown := record(1024, false), record(2048, false), record(4096, false)
	fast.Util = 3.5
	unknown.Util = math.NaN()
	recs := []Record{slow, fast, unknown}
	for _, tc := range []struct {
		r    Record
		want bool
	}{{slow, false}, {fast, true}, {unknown, false}} {
		if got := tc.r.FasterThanLink(); got != tc.want {
			t.Errorf("util %v: FasterThanLink %v, want %v", tc.r.Util, got, tc.want)
		}
	}

	out := render(t, h, recs, Summary{Rows: 3})
	rows := tableRows(out)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), out)
	}
	for i, want := range []bool{false, true, false} {
		if got := strings.Contains(rows[i], FasterMark); got != want {
			t.Errorf("row %d marked %v, want %v: %q", i, got, want, rows[i])
		}
	}
	if len(rows[0]) != len(rows[1]) {
		t.Errorf("the mark moves the columns:\n%s\n%s", rows[0], rows[1])
	}
	head, foot, _ := strings.Cut(out, "#\n# allreduce\n")
	if !strings.Contains(head, "# "+FasterMark+" after util: ") || !strings.Contains(head, "cache") {
		t.Errorf("header does not explain the mark:\n%s", head)
	}
	if !strings.Contains(foot, "# faster than the link (util marked "+FasterMark+"): 1 of 3 rows shown") {
		t.Errorf("footer does not count the marked rows:\n%s", foot)
	}
	if quiet := render(t, h, []Record{slow}, Summary{Rows: 1}); strings.Contains(quiet, "# faster than the link") {
		t.Errorf("footer counts marked rows where there are none:\n%s", quiet)
	}

	var buf bytes.Buffer
	writeAll(t, NewCSV(&buf), h, recs)
	table, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(table[0], "faster_than_link")
	if col != len(table[0])-1 && table[0][col+1] != "cache" {
		t.Errorf("faster_than_link is not after the older columns: %v", table[0])
	}
	for i, want := range []string{"false", "true", "false"} {
		if got := table[i+1][col]; got != want {
			t.Errorf("CSV row %d faster_than_link %q, want %q", i, got, want)
		}
	}

	buf.Reset()
	writeAll(t, NewJSONLines(&buf), h, recs)
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatal(err)
		}
		if got, want := obj["faster_than_link"], i == 1; got != want {
			t.Errorf("JSON row %d faster_than_link %v, want %v", i, got, want)
		}
	}
}

// TestCacheNamed: a cold run says so in the table's header and in every
// CSV row's cache column; a warm one (or one that does not say) reads warm.
func TestCacheNamed(t *testing.T) {
	for _, tc := range []struct{ cache, want string }{{"", "warm"}, {"warm", "warm"}, {"cold", "cold"}} {
		h := header("out", false)
		h.Cache = tc.cache
		out := render(t, h, []Record{record(1024, false)}, Summary{Rows: 1})
		if got := strings.Contains(out, "# cache cold"); got != (tc.want == "cold") {
			t.Errorf("cache %q: header names a cold cache %v:\n%s", tc.cache, got, out)
		}
		var buf bytes.Buffer
		writeAll(t, NewCSV(&buf), h, []Record{record(1024, false)})
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[1][slices.Index(rows[0], "cache")]; got != tc.want {
			t.Errorf("cache %q: CSV cache %q, want %q", tc.cache, got, tc.want)
		}
	}
}

// TestFasterWhy: the mark's explanation says how the link's rate was
// obtained: a probe from memory, a probe with --cache cold, or a rate the
// user gave, which was not measured at all.
func TestFasterWhy(t *testing.T) {
	for _, tc := range []struct {
		source, cache, want string
	}{
		{"auto: each of the 2 ranks sends 32MiB", "warm", "the link was measured from memory"},
		{"auto: each of the 2 ranks sends 32MiB", "cold", "with --cache cold"},
		{"given as 1GB/s", "warm", "not measured here (given as 1GB/s)"},
		{"preset hccs", "cold", "not measured here (preset hccs)"},
	} {
		h := header("out", false)
		h.LinkSource, h.Cache = tc.source, tc.cache
		if got := fasterWhy(h); !strings.Contains(got, tc.want) {
			t.Errorf("link %q, cache %s: %q, want it to say %q", tc.source, tc.cache, got, tc.want)
		}
	}
}
