package results

import (
	"strings"
	"testing"
)

// TestTableExplainsEveryColumn: for every column the table shows, under
// every option that adds columns, the header has a line explaining it, and
// none for a column it does not show.
func TestTableExplainsEveryColumn(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func() Header
	}{
		{"plain", func() Header { return header("out", false) }},
		{"--stats", func() Header { return header("out", true) }},
		{"--placement both", func() Header { return header("both", false) }},
		{"--placement both --stats", func() Header { return header("both", true) }},
		{"--retry", func() Header { h := header("out", false); h.Retry = "up to 3 times (--retry)"; return h }},
		{"--fusion", func() Header { h := header("out", false); h.Fusion = true; return h }},
		{"--overlap", func() Header {
			h := header("out", false)
			h.Overlap = "each collective started without blocking"
			return h
		}},
		{"--group", func() Header { h := header("out", false); h.Group = "tp"; return h }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h()
			r := record(1024, false)
			r.Group, r.GroupSize = h.Group, 4
			recs := []Record{r}
			if h.Placement == "both" {
				ri := r
				ri.InPlace = true
				recs = append(recs, ri)
			}
			out := render(t, h, recs, Summary{})
			head, _, ok := strings.Cut(out, "#\n# allreduce\n")
			if !ok {
				t.Fatalf("no allreduce block:\n%s", out)
			}
			var names []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "#") && strings.Contains(l, " size ") && strings.Contains(l, " count ") {
					names = strings.Fields(l[1:])
					break
				}
			}
			if len(names) == 0 {
				t.Fatalf("no column names:\n%s", out)
			}
			explained := map[string]bool{}
			for _, l := range strings.Split(head, "\n") {
				if name, _, ok := strings.Cut(strings.TrimPrefix(l, "#   "), ": "); ok && strings.HasPrefix(l, "#   ") {
					explained[name] = true
				}
			}
			shown := map[string]bool{}
			for _, n := range names {
				shown[n] = true
				if !explained[n] {
					t.Errorf("column %q has no line in the header:\n%s", n, head)
				}
			}
			for n := range explained {
				if !shown[n] && n != "out-of-place, in-place" {
					t.Errorf("header explains %q, which the table does not show:\n%s", n, head)
				}
			}
			if both := explained["out-of-place, in-place"]; both != (h.Placement == "both") {
				t.Errorf("placement %s: out-of-place, in-place explained %v", h.Placement, both)
			}
		})
	}
}

// TestTableSkewUnknown: a skew the bench could not read (0) shows as -.
func TestTableSkewUnknown(t *testing.T) {
	r := record(1024, false)
	r.SlowRank, r.Skew = 3, 0
	rows := tableRows(render(t, header("out", false), []Record{r}, Summary{}))
	if len(rows) != 1 || !strings.HasSuffix(rows[0], "     3       -") {
		t.Errorf("rows %q, want one ending in slow 3 and skew -", rows)
	}
}
