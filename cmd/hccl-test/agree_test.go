package main

import (
	"strings"
	"testing"
	"time"
)

// TestTCPRanksDisagree starts the ranks of one world under torchrun's
// variables with command lines that differ: every rank stops before the
// first op, with exit 2 and one line naming the first field that differs
// and the ranks that differ, and rank 0 prints no row (before, rank 0
// exited 0 with part of the sweep).
func TestTCPRanksDisagree(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		name  string
		extra [3][]string // each rank's extra flags
		want  string
	}{
		{"maxbytes", [3][]string{nil, nil, {"-e", "128K"}},
			"the ranks do not agree on the plan: rank 2 has maxbytes=131072 where rank 0 has maxbytes=65536 (ranks that differ from rank 0: 2)"},
		{"op", [3][]string{{"--op", "allreduce,broadcast"}, {"--op", "allreduce"}, {"--op", "allreduce"}},
			"the ranks do not agree on the plan: rank 1 has op=[allreduce] where rank 0 has op=[allreduce broadcast] (ranks that differ from rank 0: 1-2)"},
		{"agg_iters", [3][]string{nil, {"-m", "4"}, nil},
			"the ranks do not agree on the plan: rank 1 has agg_iters=4 where rank 0 has agg_iters=1 (ranks that differ from rank 0: 1)"},
		{"blocking and checks", [3][]string{{"-z", "3", "-c", "2"}, {"-z", "3"}, {"-z", "3", "-c", "2"}},
			"the ranks do not agree on the plan: rank 1 has check_iters=1 where rank 0 has check_iters=2 (ranks that differ from rank 0: 1)"},
		{"unalign", [3][]string{nil, nil, {"-u", "1"}},
			"the ranks do not agree on the plan: rank 2 has unalign=1 where rank 0 has unalign=0 (ranks that differ from rank 0: 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master := freeAddr(t)
			const secret = "agree-test-secret"
			var ps []*proc
			for rank, extra := range tc.extra {
				ps = append(ps, start(t, "rank "+string(rune('0'+rank)), torchEnv(rank, 3, master, secret), bin, args(small, extra)...))
			}
			for _, p := range ps {
				if code := p.wait(t, 60*time.Second); code != exitUsage {
					t.Errorf("%s: exit %d, want %d\nstderr:\n%s", p.name, code, exitUsage, p.errOut.String())
				}
				line := p.errOut.String()
				if strings.Count(line, "\n") != 1 || !strings.Contains(line, tc.want) {
					t.Errorf("%s: stderr %q: want one line with %q", p.name, line, tc.want)
				}
			}
			if rs := rows(t, ps[0].out.String()); len(rs) != 0 {
				t.Errorf("rank 0 printed %d rows of a sweep the ranks did not agree on:\n%s", len(rs), ps[0].out.String())
			}
			noLeftovers(t, bin)
		})
	}
}

// TestTCPScenarioRanksDisagree: the scenario command's launched ranks
// agree in the same way, here on the step's iterations (-n on one rank).
func TestTCPScenarioRanksDisagree(t *testing.T) {
	bin := buildBinary(t)
	file := writeScenario(t, `{"name": "two", "ranks": 2, "iterations": 2,
  "steps": [{"name": "ar", "group": "world", "op": "allreduce", "dtype": "fp32", "size": "1K"}]}`)
	master := freeAddr(t)
	const secret = "agree-test-secret"
	flags := []string{"scenario", "--backend", "tcp", "-T", "30s", "--connect-timeout", "30s"}
	ps := []*proc{
		start(t, "rank 0", torchEnv(0, 2, master, secret), bin, args(flags, []string{file})...),
		start(t, "rank 1", torchEnv(1, 2, master, secret), bin, args(flags, []string{"-n", "3", file})...),
	}
	const want = "hccl-test scenario: the ranks do not agree on the plan: rank 1 has iterations=3 where rank 0 has iterations=2 (ranks that differ from rank 0: 1)"
	for _, p := range ps {
		if code := p.wait(t, 60*time.Second); code != exitUsage {
			t.Errorf("%s: exit %d, want %d\nstderr:\n%s", p.name, code, exitUsage, p.errOut.String())
		}
		if line := p.errOut.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, want) {
			t.Errorf("%s: stderr %q: want one line with %q", p.name, line, want)
		}
	}
	if out := ps[0].out.String(); out != "" {
		t.Errorf("rank 0 wrote a report of a scenario the ranks did not agree on:\n%s", out)
	}
	noLeftovers(t, bin)
}
