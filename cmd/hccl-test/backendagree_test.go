package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/launcher"
	"github.com/hccl-test/hccl-test/backends/tcp"
)

// hcclTestEnv is the environment hccl-test gives the rank processes it
// starts, set here by hand.
func hcclTestEnv(rank, size int, master, secret string) []string {
	return cleanEnv(launcher.EnvRank+"="+strconv.Itoa(rank), launcher.EnvSize+"="+strconv.Itoa(size),
		launcher.EnvMaster+"="+master, tcp.EnvSecret+"="+secret)
}

// TestRanksDisagreeOnBackend: two rank processes of one world, one run
// with --backend tcp and the other with --backend proc, under torchrun's
// variables and under hccl-test's own: each exits 2 with one line naming
// the flag and both values, and rank 0 prints no row (before, both said
// "mismatched message" and exited 1).
func TestRanksDisagreeOnBackend(t *testing.T) {
	bin := buildBinary(t)
	envs := []struct {
		name string
		env  func(rank, size int, master, secret string) []string
	}{
		{"torchrun", torchEnv},
		{"hccl-test", hcclTestEnv},
	}
	for _, e := range envs {
		for _, tc := range []struct {
			backends [2]string
		}{
			{[2]string{"tcp", "proc"}},
			{[2]string{"proc", "tcp"}},
		} {
			t.Run(e.name+"/"+strings.Join(tc.backends[:], ","), func(t *testing.T) {
				master := freeAddr(t)
				const secret = "backend-agree-secret"
				var ps []*proc
				for rank, b := range tc.backends {
					ps = append(ps, start(t, fmt.Sprintf("rank %d", rank), e.env(rank, 2, master, secret), bin,
						args(small, []string{"--backend", b})...))
				}
				for rank, p := range ps {
					other := 1 - rank
					want := fmt.Sprintf("the ranks were started differently: rank %d runs --backend %s where rank %d runs --backend %s",
						other, tc.backends[other], rank, tc.backends[rank])
					if code := p.wait(t, 60*time.Second); code != exitUsage {
						t.Errorf("%s: exit %d, want %d\nstderr:\n%s", p.name, code, exitUsage, p.errOut.String())
					}
					if line := p.errOut.String(); strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, want+"\n") {
						t.Errorf("%s: stderr %q: want one line ending %q", p.name, line, want)
					}
				}
				if out := ps[0].out.String(); out != "" {
					t.Errorf("rank 0 wrote to stdout:\n%s", out)
				}
				noLeftovers(t, bin)
			})
		}
	}
}

// TestMpirunDisagreeOnBackend: the same under Open MPI's mpirun, each rank
// choosing its backend by OMPI_COMM_WORLD_RANK: mpirun exits 2, and each
// rank says why in one line. Skipped without mpirun.openmpi.
func TestMpirunDisagreeOnBackend(t *testing.T) {
	// Open MPI 4 calls itself OpenRTE in --version; every version names
	// its site.
	path := findLauncher(t, "mpirun.openmpi", "openmpi-bin", openMPIMarks...)
	bin := buildBinary(t)
	tmp := privateTemp(t)
	flags := strings.Join(args(small[2:]), " ")
	script := fmt.Sprintf(`if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec %s --backend tcp %s; else exec %s --backend proc %s; fi`,
		bin, flags, bin, flags)
	p := start(t, "mpirun", cleanEnv("TMPDIR="+tmp), path, "--oversubscribe", "--allow-run-as-root", "-np", "2", "sh", "-c", script)
	code := p.wait(t, 120*time.Second)
	noLeftovers(t, bin)
	stderr := p.errOut.String()
	if code != exitUsage {
		t.Errorf("mpirun exit %d, want %d\nstderr:\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{
		"rank 1 runs --backend proc where rank 0 runs --backend tcp\n",
		"rank 0 runs --backend tcp where rank 1 runs --backend proc\n",
	} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("stderr says %q %d times, want once:\n%s", want, strings.Count(stderr, want), stderr)
		}
	}
	if strings.Contains(stderr, "mismatched message") {
		t.Errorf("stderr tells of a mismatched message:\n%s", stderr)
	}
	if out := p.out.String(); out != "" {
		t.Errorf("mpirun's ranks wrote to stdout:\n%s", out)
	}
}

// TestScenarioRanksDisagreeOnBackend: the scenario command's ranks refuse
// a world of mixed backends the same way.
func TestScenarioRanksDisagreeOnBackend(t *testing.T) {
	bin := buildBinary(t)
	file := writeScenario(t, `{"name": "two", "ranks": 2, "iterations": 2,
  "steps": [{"name": "ar", "group": "world", "op": "allreduce", "dtype": "fp32", "size": "1K"}]}`)
	master := freeAddr(t)
	const secret = "backend-agree-secret"
	flags := []string{"scenario", "-T", "30s", "--connect-timeout", "30s"}
	ps := []*proc{
		start(t, "rank 0", torchEnv(0, 2, master, secret), bin, args(flags, []string{"--backend", "tcp", file})...),
		start(t, "rank 1", torchEnv(1, 2, master, secret), bin, args(flags, []string{"--backend", "proc", file})...),
	}
	wants := []string{
		"the ranks were started differently: rank 1 runs --backend proc where rank 0 runs --backend tcp\n",
		"the ranks were started differently: rank 0 runs --backend tcp where rank 1 runs --backend proc\n",
	}
	for i, p := range ps {
		if code := p.wait(t, 60*time.Second); code != exitUsage {
			t.Errorf("%s: exit %d, want %d\nstderr:\n%s", p.name, code, exitUsage, p.errOut.String())
		}
		if line := p.errOut.String(); strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "hccl-test scenario: ") || !strings.HasSuffix(line, wants[i]) {
			t.Errorf("%s: stderr %q: want one line ending %q", p.name, line, wants[i])
		}
	}
	if out := ps[0].out.String(); out != "" {
		t.Errorf("rank 0 wrote a report:\n%s", out)
	}
}
