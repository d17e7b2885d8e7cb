package backends

import (
	"fmt"
	"slices"
	"strings"
)

// maxRankRuns is how many runs of consecutive ranks RankList names before
// it only counts the rest: an error names ranges, never all of 4096 ranks.
const maxRankRuns = 16

// RankList names a set of ranks for a message, in order, three or more
// consecutive ranks as a range: "rank 3", "ranks 3, 4", "ranks 3-4095",
// "ranks 0, 2-5, 9". Past
// maxRankRuns ranges it names the first ones and counts the rest, so the
// text stays short whatever the world's size. Duplicates count once; ranks
// need not be sorted.
func RankList(ranks []int) string {
	rs := slices.Clone(ranks)
	slices.Sort(rs)
	rs = slices.Compact(rs)
	switch len(rs) {
	case 0:
		return "no rank"
	case 1:
		return fmt.Sprintf("rank %d", rs[0])
	}
	var b strings.Builder
	b.WriteString("ranks ")
	runs, shown := 0, 0
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if runs == maxRankRuns {
			fmt.Fprintf(&b, ", and %d more (%d in all)", len(rs)-shown, len(rs))
			break
		}
		if runs > 0 {
			b.WriteString(", ")
		}
		switch j - i {
		case 0:
			fmt.Fprintf(&b, "%d", rs[i])
		case 1: // two are as short listed
			fmt.Fprintf(&b, "%d, %d", rs[i], rs[j])
		default:
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[j])
		}
		runs++
		shown += j - i + 1
		i = j + 1
	}
	return b.String()
}
