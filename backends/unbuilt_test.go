package backends_test

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
)

// TestLookupUnbuilt: a backend that exists only in a build with a tag is
// named as such, with the tag and the docs, not as unknown.
func TestLookupUnbuilt(t *testing.T) {
	if _, err := backends.Lookup("mpi"); err == nil {
		t.Skip("built with -tags mpi")
	}
	for _, c := range []struct{ name, want, lack string }{
		{"mpi", "not in this build: it needs a build with -tags mpi", "unknown backend"},
		{"mpi", "docs/mpi.md", "unknown backend"},
		{"carrier-pigeon", `unknown backend "carrier-pigeon"`, "tags"},
	} {
		_, err := backends.Lookup(c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.lack) {
			t.Errorf("Lookup(%q): %v; want an error with %q, without %q", c.name, err, c.want, c.lack)
		}
	}
}
