package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/bench"
)

// flagLineRE matches the first line of a flag's entry in --help: its short
// form, if any, and its name.
var flagLineRE = regexp.MustCompile(`^  (?:-[a-zA-Z], |    )--([a-z0-9-]+)`)

// TestHelpLayout checks --help's layout: every line within helpWidth columns,
// every section heading present and in order (and no flag left outside
// them, under "Other"), every flag of every section listed exactly once,
// with at most one default, and sizes and durations shown as a user
// types them.
func TestHelpLayout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	lines := strings.Split(strings.TrimRight(help, "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > helpWidth {
			t.Errorf("line %d has %d columns, more than %d: %q", i+1, n, helpWidth, l)
		}
	}

	headings := []string{"Sweep:", "Backend and launch:", "Algorithms:", "Faults:", "Domains:", "Outputs:", "Sim (--backend sim):", "Examples:"}
	at := 0
	for _, h := range headings {
		i := indexLine(lines[at:], h)
		if i < 0 {
			t.Errorf("no heading %q after line %d", h, at)
			continue
		}
		at += i + 1
	}
	if indexLine(lines, helpOther+":") >= 0 {
		t.Errorf("flags under %q: define them in a section (sweepflags.go)", helpOther)
	}

	// Each flag's entry: its first line and the indented lines that
	// continue it.
	entries := map[string]string{}
	count := map[string]int{}
	var current string
	for _, l := range lines {
		if m := flagLineRE.FindStringSubmatch(l); m != nil {
			current = m[1]
			count[current]++
			entries[current] += l
			continue
		}
		if current != "" && strings.HasPrefix(l, "        ") {
			entries[current] += " " + strings.TrimSpace(l)
			continue
		}
		current = ""
	}
	p, o := bench.DefaultPlan(), options{}
	f := newSweepFlags(&p, &o, environment{})
	f.fs.VisitAll(func(fl *pflag.Flag) {
		name := fl.Name
		if count[name] != 1 {
			t.Errorf("--%s is listed %d times, want once", name, count[name])
		}
		if n := strings.Count(entries[name], "(default"); n > 1 {
			t.Errorf("--%s gives %d defaults: %s", name, n, entries[name])
		}
		delete(count, name)
	})
	for name := range count {
		t.Errorf("--%s is listed but in no section", name)
	}
	for flag, want := range map[string]string{"minbytes": "(default 32M)", "maxbytes": "(default 32M)", "timeout": "(default 2m)"} {
		if !strings.Contains(entries[flag], want) {
			t.Errorf("--%s: want %q in %q", flag, want, entries[flag])
		}
	}
}

// indexLine returns the index of the first of lines equal to s, or -1.
func indexLine(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

// TestTypedForms checks that sizes and durations print as they are typed,
// and that what they print reads back to the same value.
func TestTypedForms(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {1000, "1000"}, {1024, "1K"}, {1536, "1536"}, {3 << 19, "1536K"}, {32 << 20, "32M"}, {1 << 30, "1G"}, {5 << 40, "5T"}} {
		v := sizeValue(tc.n)
		if got := v.String(); got != tc.want {
			t.Errorf("size %d: got %q, want %q", tc.n, got, tc.want)
		}
		var back sizeValue
		if err := back.Set(v.String()); err != nil || back != v {
			t.Errorf("size %d: %q reads back as %d, %v", tc.n, v.String(), back, err)
		}
	}
	for _, tc := range []struct {
		d    durationValue
		want string
	}{{0, "0"}, {durationValue(2 * 60e9), "2m"}, {durationValue(90e9), "1m30s"}, {durationValue(3600e9), "1h"}, {durationValue(5400e9), "1h30m"}, {durationValue(50e3), "50µs"}} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("duration %d: got %q, want %q", tc.d, got, tc.want)
		}
		var back durationValue
		if err := back.Set(tc.d.String()); err != nil || back != tc.d {
			t.Errorf("duration %q reads back as %v, %v", tc.d.String(), back, err)
		}
	}
}
