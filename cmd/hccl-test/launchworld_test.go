package main

// End-to-end tests of the world a launcher starts with no --backend: the
// launched processes are one world of the proc backend, printed once by
// rank 0; -p is the ranks per node, as hccl_test's, refused only where it
// contradicts the launcher; --backend shm, whose ranks cannot span
// processes, is refused.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// launchedSmall is small with no --backend: what a launched world runs
// when none is named.
var launchedSmall = func() []string {
	var out []string
	for i := 0; i < len(small); i++ {
		if small[i] == "--backend" {
			i++
			continue
		}
		out = append(out, small[i])
	}
	return out
}()

// refusedEverywhere checks a launch refused before any rank started: exit
// 2, no table, and every line of ours on stderr the one refusal (each
// process prints its own), holding every string of want.
func refusedEverywhere(t *testing.T, p *proc, code, procs int, want ...string) {
	t.Helper()
	stdout, stderr := p.out.String(), p.errOut.String()
	if code != 2 {
		t.Fatalf("%s: exit %d, want 2\nstderr:\n%s\nstdout:\n%s", p.name, code, stderr, stdout)
	}
	if strings.Contains(stdout, "# hccl-test ") || len(rows(t, stdout)) > 0 {
		t.Errorf("%s: a refused launch printed a table:\n%s", p.name, stdout)
	}
	ours := 0
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "hccl-test: ") {
			continue // the launcher's own words
		}
		ours++
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: line %q does not say %q", p.name, line, w)
			}
		}
	}
	if ours < 1 || ours > procs {
		t.Errorf("%s: %d lines of ours on stderr, want 1 to %d (one per process):\n%s", p.name, ours, procs, stderr)
	}
}

// TestLaunchedWorld: hccl_test's own launch line, `mpirun -n N hccl-test
// ... -p N` with no --backend, under the real Open MPI and MPICH: one
// table of one world of N ranks, printed once; -p that contradicts the
// launcher and --backend shm are refused.
func TestLaunchedWorld(t *testing.T) {
	bin := buildBinary(t)
	dtypes := []string{"fp32"}
	for _, mc := range mpiCommands {
		t.Run(mc.name, func(t *testing.T) {
			path := findLauncher(t, mc.binary, mc.pkg, mc.marks...)
			run := func(t *testing.T, n int, extra ...string) (*proc, int) {
				c := mc.cmd(path, n, bin, args(launchedSmall, extra))
				p := start(t, strings.Join(c[:len(c)-len(launchedSmall)-len(extra)], " "), cleanEnv("TMPDIR="+privateTemp(t)), c[0], c[1:]...)
				return p, p.wait(t, 120*time.Second)
			}
			for _, n := range []int{4, 8} {
				if n == 8 && mc.name != "open mpi" {
					continue // one 8-rank world is enough on a loaded machine
				}
				t.Run(fmt.Sprintf("-n %d -p %d", n, n), func(t *testing.T) {
					p, code := run(t, n, "--op", "allreduce,allgather", "-p", fmt.Sprint(n))
					stdout := p.out.String()
					if code != 0 {
						t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, p.errOut.String(), stdout)
					}
					if h := strings.Count(stdout, "# hccl-test "); h != 1 {
						t.Errorf("%d tables, want 1 (rank 0's)", h)
					}
					checkTableOn(t, "proc", stdout, n, 2*7, dtypes)
					noLeftovers(t, bin)
				})
			}
			t.Run("-n 4 -p 8", func(t *testing.T) {
				p, code := run(t, 4, "-p", "8")
				refusedEverywhere(t, p, code, 4, "--ranks 8: under a launcher -p is the ranks per node", "started 4 processes on this host", "give -p 4")
				noLeftovers(t, bin)
			})
			t.Run("--backend shm", func(t *testing.T) {
				p, code := run(t, 2, "--backend", "shm")
				refusedEverywhere(t, p, code, 2, "--backend shm: this process was started by", "cannot make the launched processes one world", "leave --backend out")
				noLeftovers(t, bin)
			})
		})
	}
}

// TestLaunchedPerNode: -p under each launcher's environment, given to one
// process: agreeing with the launcher's processes on this host (or, where
// the launcher does not say, no more than its world) runs the launcher's
// world on proc; contradicting it is one line and exit 2, before any rank
// starts; a launcher's world of one process is no world of several.
func TestLaunchedPerNode(t *testing.T) {
	bin := buildBinary(t)
	tmp := privateTemp(t)
	ompi := func(rank, size, local int, extra ...string) []string {
		return cleanEnv(append([]string{fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", rank), fmt.Sprintf("OMPI_COMM_WORLD_SIZE=%d", size),
			fmt.Sprintf("OMPI_COMM_WORLD_LOCAL_SIZE=%d", local), "PMIX_NAMESPACE=prterun-vm-77@1", "TMPDIR=" + tmp}, extra...)...)
	}
	master := []string{"--master", "127.0.0.1:4000"}
	tests := []struct {
		name   string
		env    []string
		args   []string
		header string   // a run: the dry run's header
		refuse []string // a refusal: what its one line says
	}{
		{"open mpi, -p is the local size", ompi(1, 4, 4), []string{"-p", "4"}, "# backend proc  ranks 4 ", nil},
		{"open mpi, no -p", ompi(1, 4, 4), nil, "# backend proc  ranks 4 ", nil},
		{"open mpi, two hosts, -p per host", ompi(1, 4, 2, "HCCL_TEST_SECRET=s"), args(master, []string{"-p", "2"}), "# backend proc  ranks 4 ", nil},
		{"open mpi, -t 2: -p is the processes", ompi(1, 4, 4), []string{"-p", "4", "-t", "2"}, "# backend proc  ranks 8 ", nil},
		{"open mpi, --backend tcp", ompi(1, 4, 4), []string{"--backend", "tcp", "-p", "4"}, "# backend tcp  ranks 4 ", nil},
		{"open mpi of one process: -p ranks in it", ompi(0, 1, 1), []string{"-p", "4"}, "# backend shm  ranks 4 ", nil},
		{"slurm, -p is the tasks per node", srunEnv(tmp, 1, 4, 5), []string{"-p", "4"}, "# backend proc  ranks 4 ", nil},
		{"torchrun, -p within the world", torchEnv(1, 4, "127.0.0.1:4000", "s"), []string{"-p", "2"}, "# backend proc  ranks 4 ", nil},

		{"open mpi, -p past the local size", ompi(1, 4, 4), []string{"-p", "8"},
			"", []string{"--ranks 8: under a launcher -p is the ranks per node, as hccl_test's", "OMPI_COMM_WORLD_LOCAL_SIZE=4", "give -p 4"}},
		{"open mpi, two hosts, -p the world", ompi(1, 4, 2, "HCCL_TEST_SECRET=s"), args(master, []string{"-p", "4"}),
			"", []string{"--ranks 4:", "started 2 processes on this host (OMPI_COMM_WORLD_LOCAL_SIZE=2)", "give -p 2"}},
		{"slurm, -p short of the tasks per node", srunEnv(tmp, 1, 4, 5), []string{"-p", "2"},
			"", []string{"--ranks 2:", "SLURM_TASKS_PER_NODE=4 at SLURM_NODEID=0", "give -p 4"}},
		{"torchrun, -p past the world", torchEnv(1, 2, "127.0.0.1:4000", "s"), []string{"-p", "3"},
			"", []string{"--ranks 3:", "started 2 processes in all", "give at most -p 2"}},
		{"open mpi, --backend shm", ompi(1, 4, 4), []string{"--backend", "shm"},
			"", []string{"--backend shm: this process was started by mpirun (Open MPI)", "as rank 1 of 4 processes", "leave --backend out"}},
		{"slurm, --backend sim", srunEnv(tmp, 0, 2, 6), []string{"--backend", "sim"},
			"", []string{"--backend sim: this process was started by srun (Slurm)", "leave --backend out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBinaryEnv(t, bin, tc.env, args([]string{"-b", "1K", "-e", "1K", "--dry-run"}, tc.args)...)
			if tc.refuse == nil {
				if code != 0 || !strings.Contains(stdout, tc.header) {
					t.Fatalf("exit %d, stderr %q; want 0 and %q in:\n%s", code, stderr, tc.header, stdout)
				}
				return
			}
			if code != 2 || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and one line", code, stderr, stdout)
			}
			for _, w := range tc.refuse {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}
