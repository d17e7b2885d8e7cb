package traffic

import (
	"os"
	"strings"
	"testing"
)

// TestDocsRefusals runs every row of docs/traffic.md's table of refused
// specs and checks the line it gives.
func TestDocsRefusals(t *testing.T) {
	text, err := os.ReadFile("../docs/traffic.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(text), "<!-- TRAFFIC REFUSALS")
	if !ok {
		t.Fatal("docs/traffic.md has no table of refused specs")
	}
	n := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 4 {
			if n > 0 && !strings.HasPrefix(line, "|") {
				break
			}
			continue
		}
		spec := strings.Trim(strings.TrimSpace(cells[1]), "`")
		want := strings.TrimSpace(cells[2])
		n++
		_, err := ParseSpec(spec)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", spec, err, want)
		}
	}
	if n < 10 {
		t.Errorf("found %d rows, want at least 10", n)
	}
}
