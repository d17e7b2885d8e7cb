package main

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestGOMAXPROCSRefused: a GOMAXPROCS that every rank process would take
// and that no run can use is refused before anything starts, by the sweep
// and by the scenario command; one within the CPUs is taken.
func TestGOMAXPROCSRefused(t *testing.T) {
	over := strconv.Itoa(runtime.NumCPU() + 1)
	for _, tc := range []struct {
		name, value string
		args        []string
		want        int
	}{
		{"one", "1", []string{"--backend", "tcp", "-p", "2", "--dry-run"}, exitOK},
		{"more than the CPUs", over, []string{"--backend", "tcp", "-p", "2", "--dry-run"}, exitUsage},
		{"huge", "100000", []string{"--dry-run"}, exitUsage},
		{"zero", "0", []string{"--dry-run"}, exitUsage},
		{"not a number", "many", []string{"--dry-run"}, exitUsage},
		{"scenario", over, []string{"scenario", "x.json"}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tc.value)
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.want {
				t.Fatalf("GOMAXPROCS=%s %v: exit %d, want %d; stderr %q", tc.value, tc.args, code, tc.want, stderr.String())
			}
			if tc.want == exitUsage {
				line := stderr.String()
				if strings.Count(line, "\n") != 1 || !strings.Contains(line, `GOMAXPROCS="`+tc.value+`"`) {
					t.Errorf("stderr %q: want one line naming GOMAXPROCS=%q", line, tc.value)
				}
			}
		})
	}
}
