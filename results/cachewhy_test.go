package results

import (
	"strconv"
	"strings"
	"testing"
)

// TestFasterAboveCache: with a fake last-level cache, a row faster than
// its link is explained by the cache only when it fits the cache; a larger
// one is counted apart and explained by the probe's figure and spread, and
// no line calls its data "in cache".
func TestFasterAboveCache(t *testing.T) {
	const llc = 4 << 20
	for _, tc := range []struct {
		name        string
		sizes       []int64 // every row faster than its link
		cached, big int     // rows the footer counts in each line
	}{
		{"all in cache", []int64{1 << 20, 4 << 20}, 2, 0},
		{"all above", []int64{8 << 20, 1 << 30}, 0, 2},
		{"both", []int64{1 << 20, 1 << 30}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header("out", false)
			h.LinkSource, h.LinkGBps, h.LinkLoGBps, h.LinkHiGBps, h.LLCBytes = "auto: probed", 2, 0.24, 5.93, llc
			var recs []Record
			for _, s := range tc.sizes {
				r := record(s, false)
				r.Util = 1.42
				recs = append(recs, r)
			}
			out := render(t, h, recs, Summary{Rows: len(recs)})
			head, foot, _ := strings.Cut(out, "#\n# allreduce\n")
			if !strings.Contains(head, "last-level cache (4MiB)") {
				t.Errorf("the header does not say which rows the cache explains:\n%s", head)
			}
			cachedLine := "# faster than the link (util marked !): "
			bigLine := "# faster than the link (util marked !) and larger than the last-level cache (4MiB), so not from cache: "
			for _, c := range []struct {
				prefix string
				n      int
				want   string
			}{{cachedLine, tc.cached, "data in cache"}, {bigLine, tc.big, "spread 0.24..5.93 GB/s"}} {
				line := lineWith(foot, c.prefix)
				if (line != "") != (c.n > 0) {
					t.Errorf("footer line %q present %v, want %v:\n%s", c.prefix, line != "", c.n > 0, foot)
					continue
				}
				if line == "" {
					continue
				}
				if !strings.HasPrefix(line, c.prefix) || !strings.Contains(line, c.want) ||
					!strings.Contains(line, ": "+strconv.Itoa(c.n)+" of ") {
					t.Errorf("footer line %q, want %d rows and %q", line, c.n, c.want)
				}
				if c.prefix == bigLine && strings.Contains(line, "in cache") {
					t.Errorf("rows above the cache explained by the cache: %q", line)
				}
			}
		})
	}
}

// TestUncertainLinkMarked: when the probe's repetitions did not agree,
// every row's util carries UncertainMark (a faster row keeps FasterMark)
// and the header says why; a figure that agreed marks nothing.
func TestUncertainLinkMarked(t *testing.T) {
	h := header("out", false)
	slow, fast := record(1024, false), record(2048, false)
	fast.Util = 3
	for _, uncertain := range []bool{false, true} {
		h.LinkUncertain = uncertain
		out := render(t, h, []Record{slow, fast}, Summary{Rows: 2})
		rows := tableRows(out)
		if got := strings.Contains(rows[0], UncertainMark+" "); got != uncertain {
			t.Errorf("uncertain %v: row marked %v: %q", uncertain, got, rows[0])
		}
		if !strings.Contains(rows[1], FasterMark) {
			t.Errorf("uncertain %v: the faster row lost its mark: %q", uncertain, rows[1])
		}
		if got := strings.Contains(out, "# "+UncertainMark+" after util: "); got != uncertain {
			t.Errorf("uncertain %v: header explains the mark %v:\n%s", uncertain, got, out)
		}
	}
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
