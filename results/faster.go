package results

import (
	"fmt"
	"strings"
)

// UncertainMark follows the util of every row (that FasterMark does not
// mark) when the link's figure is uncertain: the link probe's repetitions
// did not agree (Header.LinkUncertain).
const UncertainMark = "?"

// aboveCache reports whether the row is larger than the host's last-level
// cache with a warm cache, so that its data cannot have sat in the cache
// between iterations: a row faster than its link is then not explained
// by the cache.
func (h Header) aboveCache(r Record) bool {
	return h.LLCBytes > 0 && r.Bytes > h.LLCBytes && cacheName(h) != "cold"
}

// fasterFooter writes the footer's count of the rows faster than their
// link, with why: the rows that fit the last-level cache and those that
// do not are told apart, since only the first can owe it to the cache.
func (t *Table) fasterFooter() {
	if small := t.faster - t.fasterBig; small > 0 {
		t.printf("# faster than the link (util marked %s): %d of %s shown (%s)\n", FasterMark,
			small, Count(t.rows, "row"), fasterWhy(t.h))
	}
	if t.fasterBig > 0 {
		t.printf("# faster than the link (util marked %s) and larger than the last-level cache (%s), so not from cache: %d of %s shown (%s)\n",
			FasterMark, FormatBinarySize(t.h.LLCBytes), t.fasterBig, Count(t.rows, "row"), aboveProbe(t.h))
	}
}

// aboveProbe says why a row larger than the cache moved data faster than
// the link's figure: the figure itself.
func aboveProbe(h Header) string {
	if h.LinkHiGBps > 0 {
		return fmt.Sprintf("above the probe's figure of %.2f GB/s, whose repetitions spread %.3g..%.3g GB/s: the probe's exchange, or the host's load while it ran, moved less than these rows",
			h.LinkGBps, h.LinkLoGBps, h.LinkHiGBps)
	}
	return fmt.Sprintf("above the probe's figure of %.2f GB/s: the probe's exchange, or the host's load while it ran, moved less than these rows", h.LinkGBps)
}

// fasterWhy says why a row can move data faster than its link, and how to
// measure without that.
func fasterWhy(h Header) string {
	if h.LinkSource != "" && !strings.HasPrefix(h.LinkSource, "auto") {
		return "the link's rate was not measured here (" + h.LinkSource + "): the row's data sat in cache, or the rate is below what this host moves"
	}
	if cacheName(h) == "cold" {
		return "its data came from memory with --cache cold, so the link was measured below what the row reached"
	}
	return "data in cache: the link was measured from memory; --cache cold measures from memory"
}

// fasterWhyHeader is fasterWhy for the header, written before any row:
// where the last-level cache is known, it says which rows the cache can
// explain and what explains the others.
func fasterWhyHeader(h Header) string {
	if h.LLCBytes <= 0 || cacheName(h) == "cold" || (h.LinkSource != "" && !strings.HasPrefix(h.LinkSource, "auto")) {
		return fasterWhy(h)
	}
	return fmt.Sprintf("in a row up to the last-level cache (%s), data in cache: the link was measured from memory; --cache cold measures from memory; in a larger row, not the cache: the row moved more than the probe's figure",
		FormatBinarySize(h.LLCBytes))
}
