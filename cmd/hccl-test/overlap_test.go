package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestOverlapRun overlaps collectives with synthetic compute on both
// backends, sized by each row's own time over tcp and fixed on shm: exit
// 0, every row correct, and the compute, total and eff columns filled.
func TestOverlapRun(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"tcp auto", []string{"--backend", "tcp", "-p", "3", "--overlap", "auto"}},
		{"shm 1ms", []string{"--backend", "shm", "-p", "4", "--overlap", "1ms", "--fusion", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--op", "allreduce,allgather", "-b", "1K", "-e", "64K", "-f", "8",
				"-n", "3", "-w", "1", "--link-bw", "10GB/s"}, tc.args...)
			stdout, stderr, code := runBinary(t, bin, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			for _, want := range []string{"# overlap: each collective started without blocking", "compute     total    eff",
				"# wrong elements: 0 OK"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			rows := tableRowLines(stdout)
			for _, line := range rows {
				f := strings.Fields(line)
				// the last three columns: compute and total in us, eff
				if len(f) < 3 || f[len(f)-3] == "-" || f[len(f)-2] == "-" || strings.Contains(f[len(f)-1], "NaN") {
					t.Errorf("row without overlap figures: %q", line)
				}
			}
			if len(rows) == 0 {
				t.Errorf("no rows:\n%s", stdout)
			}
		})
	}
}

// TestOverlapEffRange runs shm with --overlap 500us at -p 2: every row's
// eff is a fraction (0 to 1), or "-" when the ranks outnumber the cores,
// which the header then says.
func TestOverlapEffRange(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "--backend", "shm", "-p", "2", "--overlap", "500us",
		"--op", "allreduce", "-b", "8", "-e", "256K", "-f", "8", "-n", "5", "-w", "1", "--link-bw", "10GB/s")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	rows := tableRowLines(stdout)
	for _, line := range rows {
		f := strings.Fields(line)
		eff := f[len(f)-1]
		if eff == "-" {
			if !strings.Contains(stdout, "outnumber the") {
				t.Errorf("eff - without the header saying why: %q", line)
			}
			continue
		}
		if v, err := strconv.ParseFloat(eff, 64); err != nil || v < 0 || v > 1 {
			t.Errorf("eff %q out of [0, 1]: %q", eff, line)
		}
	}
	if len(rows) == 0 {
		t.Errorf("no rows:\n%s", stdout)
	}
}
