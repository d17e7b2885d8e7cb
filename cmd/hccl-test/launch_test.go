package main

// End-to-end tests of --backend tcp under launchers with no --master and
// no secret: the real Open MPI mpirun and MPICH mpiexec, and Slurm's srun
// as the environment it gives each task.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// findLauncher finds a launcher binary by name, and checks that it is the
// implementation whose flags the test uses: its --version names one of
// marks. It skips t otherwise.
func findLauncher(t *testing.T, name, pkg string, marks ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install %s)", name, pkg)
	}
	v, _ := exec.Command(path, "--version").CombinedOutput()
	if !isLauncher(v, marks) {
		t.Skipf("%s is not %s's: %q", name, marks[0], strings.TrimSpace(string(v)))
	}
	return path
}

// isLauncher reports whether version, a launcher's --version, names one of
// marks.
func isLauncher(version []byte, marks []string) bool {
	for _, m := range marks {
		if bytes.Contains(version, []byte(m)) {
			return true
		}
	}
	return false
}

// openMPIMarks are what Open MPI's launcher prints in its --version: Open
// MPI 4's orterun prints "mpirun (Open MPI) 4.1.4" when called mpirun but
// "mpirun.openmpi (OpenRTE) 4.1.4" under Debian's name for it; Open MPI 5
// (PRRTE) prints "mpirun (Open MPI) 5.0.x".
var openMPIMarks = []string{"(Open MPI)", "(OpenRTE)"}

// mpiCommands are the real launchers, each starting n ranks of bin with
// args, and nothing else set up.
var mpiCommands = []struct {
	name, binary, pkg string
	marks             []string
	cmd               func(path string, n int, bin string, args []string) []string
}{
	{"open mpi", "mpirun.openmpi", "openmpi-bin", openMPIMarks, func(path string, n int, bin string, a []string) []string {
		return append([]string{path, "--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(n), bin}, a...)
	}},
	{"mpich", "mpiexec.hydra", "mpich", []string{"HYDRA"}, func(path string, n int, bin string, a []string) []string {
		return append([]string{path, "-n", strconv.Itoa(n), bin}, a...)
	}},
}

// TestLaunchersNoSetup: a plain `mpirun -np 4 hccl-test --backend tcp`,
// with Open MPI and with MPICH, two jobs of each at once: every job prints
// one correct table and leaves neither a process nor a file behind.
func TestLaunchersNoSetup(t *testing.T) {
	bin := buildBinary(t)
	for _, mc := range mpiCommands {
		t.Run(mc.name, func(t *testing.T) {
			path := findLauncher(t, mc.binary, mc.pkg, mc.marks...)
			tmp := privateTemp(t)
			dtypes := []string{"fp32", "int32"}
			a := args(small, []string{"--op", "allreduce,alltoall", "-d", strings.Join(dtypes, ",")})
			var jobs []*proc
			for j := range 2 {
				c := mc.cmd(path, 4, bin, a)
				jobs = append(jobs, start(t, fmt.Sprintf("%s job %d", mc.binary, j), cleanEnv("TMPDIR="+tmp), c[0], c[1:]...))
			}
			for _, p := range jobs {
				code := p.wait(t, 120*time.Second)
				stdout, stderr := p.out.String(), p.errOut.String()
				if code != 0 {
					t.Fatalf("%s: exit %d\nstderr:\n%s\nstdout:\n%s", p.name, code, stderr, stdout)
				}
				if n := strings.Count(stdout, "# hccl-test "); n != 1 {
					t.Errorf("%s: %d table headers, want 1 (rank 0's)", p.name, n)
				}
				checkTable(t, stdout, 4, 2*2*7, dtypes)
			}
			noLeftovers(t, bin)
			noBoards(t, tmp)
		})
	}
}

// privateTemp is a fresh TMPDIR for the ranks of one test.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noBoards fails t if a rendezvous file is left under tmp.
func noBoards(t *testing.T, tmp string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(tmp, "hccl-test-*", "*"))
	if len(left) > 0 {
		t.Errorf("rendezvous files left behind: %v", left)
	}
}

// srunEnv is the environment srun gives task rank of n on one node, in
// job job's step 0.
func srunEnv(tmp string, rank, n, job int, extra ...string) []string {
	return cleanEnv(append([]string{"TMPDIR=" + tmp,
		"SLURM_PROCID=" + strconv.Itoa(rank), "SLURM_NTASKS=" + strconv.Itoa(n), "SLURM_NPROCS=" + strconv.Itoa(n),
		"SLURM_LOCALID=" + strconv.Itoa(rank), "SLURM_NODEID=0", "SLURM_NNODES=1", "SLURM_STEP_NUM_NODES=1",
		"SLURM_JOB_ID=" + strconv.Itoa(job), "SLURM_JOBID=" + strconv.Itoa(job), "SLURM_STEP_ID=0", "SLURM_STEPID=0",
		"SLURM_JOB_NODELIST=vm", "SLURM_STEP_NODELIST=vm", "SLURM_TASKS_PER_NODE=" + strconv.Itoa(n),
		"SLURM_CLUSTER_NAME=cluster"}, extra...)...)
}

// srunTasks starts the ranks of one Slurm job step as srun would, each
// with srunEnv, and waits for them all.
func srunTasks(t *testing.T, bin, tmp string, ranks []int, n, job int, a []string, limit time.Duration) []*proc {
	t.Helper()
	var ps []*proc
	for _, r := range ranks {
		ps = append(ps, start(t, fmt.Sprintf("task %d", r), srunEnv(tmp, r, n, job), bin, a...))
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); <-p.done }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		for _, p := range ps {
			_ = p.cmd.Process.Kill()
		}
		<-done
		t.Fatalf("the tasks hung: still running after %v", limit)
	}
	return ps
}

// TestSrunEnvironment: tasks with the environment srun sets meet with no
// --master and no secret, past a file a dead job left under the same
// name; a task whose rank 0 never comes names the file it waited for.
func TestSrunEnvironment(t *testing.T) {
	bin := buildBinary(t)
	dtypes := []string{"fp32"}
	t.Run("four tasks, past a dead job's file", func(t *testing.T) {
		tmp := privateTemp(t)
		dir := filepath.Join(tmp, "hccl-test-"+strconv.Itoa(os.Getuid()))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		dead := exec.Command("true")
		if err := dead.Run(); err != nil {
			t.Fatal(err)
		}
		stale := fmt.Sprintf("hccl-test rendezvous 1\naddr 127.0.0.1:1\nsecret 6869\npid %d\nstart 1\n", dead.Process.Pid)
		if err := os.WriteFile(filepath.Join(dir, "hccl-test-slurm-cluster-41.0"), []byte(stale), 0o600); err != nil {
			t.Fatal(err)
		}
		ps := srunTasks(t, bin, tmp, []int{3, 2, 1, 0}, 4, 41, args(small, []string{"--op", "allgather"}), 120*time.Second)
		for _, p := range ps {
			if p.code != 0 {
				t.Fatalf("%s: exit %d\nstderr:\n%s", p.name, p.code, p.errOut.String())
			}
		}
		checkTable(t, ps[3].out.String(), 4, 7, dtypes)
		noBoards(t, tmp)
		noLeftovers(t, bin)
	})
	t.Run("rank 0 never comes", func(t *testing.T) {
		tmp := privateTemp(t)
		a := args(small, []string{"--connect-timeout", "1s"})
		ps := srunTasks(t, bin, tmp, []int{1, 2}, 3, 42, a, 60*time.Second)
		for _, p := range ps {
			stderr := p.errOut.String()
			if p.code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "hccl-test-slurm-cluster-42.0: it was never written") ||
				!strings.Contains(stderr, "Slurm job 42 step 0") || !strings.Contains(stderr, "--connect-timeout") {
				t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming the file waited for", p.name, p.code, stderr)
			}
		}
	})
}

// TestLauncherRefusals: where rank 0's address or the secret cannot be
// derived, every rank exits 2 with one line saying what to set.
func TestLauncherRefusals(t *testing.T) {
	bin := buildBinary(t)
	tmp := privateTemp(t)
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"slurm across nodes", srunEnv(tmp, 1, 4, 9, "SLURM_NNODES=2", "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_NODELIST=node[01-02]"),
			[]string{"node01:20288", "--bind", "HCCL_TEST_SECRET"}},
		{"open mpi across hosts", cleanEnv("OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=2"),
			[]string{"several hosts", "--master HOST:PORT"}},
		{"mpich without its PMI connection", cleanEnv("PMI_RANK=1", "PMI_SIZE=4"), []string{"PMI_FD", "--master", "HCCL_TEST_SECRET"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBinaryEnv(t, bin, tc.env, small...)
			if code != 2 || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// TestHelpEnvironment: --help documents the variables the launcher errors
// point at.
func TestHelpEnvironment(t *testing.T) {
	var help bytes.Buffer
	if _, _, err := parseFlags([]string{"--help"}, &help); err != errHelpShown {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(help.String(), "\nEnvironment:\n")
	if !ok {
		t.Fatalf("no Environment section in --help:\n%s", help.String())
	}
	for _, v := range []string{"HCCL_TEST_SECRET", "MASTER_ADDR, MASTER_PORT", "HCCL_CONNECT_TIMEOUT", "SLURM_*", "PMI_*", "OMPI_*"} {
		if !strings.Contains(section, "  "+v) && !strings.Contains(section, ", "+v) {
			t.Errorf("--help's Environment section does not list %s", v)
		}
	}
}

// TestRealSrun starts a single-host Slurm (scripts/slurm-single-host.sh)
// and runs a real `srun -n 4 hccl-test --backend tcp`, with nothing else
// set up, and with -t 2 (two processes of two ranks); then hccl_test's
// launch line with no --backend (one world on proc, -p the tasks per
// node), and the -p and --backend that srun's tasks refuse.
func TestRealSrun(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a single-host Slurm needs root (slurmd)")
	}
	for _, b := range []string{"srun", "slurmctld", "slurmd", "munged"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed (apt-get install slurm-wlm munge)", b)
		}
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	script, err := filepath.Abs("../../scripts/slurm-single-host.sh")
	if err != nil {
		t.Fatal(err)
	}
	// The script picks two free ports at random; one taken by another
	// process before its daemon binds it fails the start: try once more.
	var out []byte
	for try := 1; try <= 2; try++ {
		out, err = exec.Command("timeout", "60", script, "start", dir).CombinedOutput()
		if err == nil {
			break
		}
		t.Logf("starting Slurm, try %d: %v\n%s", try, err, out)
		_ = exec.Command(script, "stop", dir).Run()
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	if err != nil {
		t.Fatalf("starting Slurm: %v\n%s", err, out)
	}
	tmp := privateTemp(t)
	env := cleanEnv("SLURM_CONF="+filepath.Join(dir, "slurm.conf"), "TMPDIR="+tmp)
	for _, tc := range []struct {
		tasks, ranks int
		extra        []string
	}{{4, 4, nil}, {2, 4, []string{"-t", "2"}}} {
		t.Run(fmt.Sprintf("srun -n %d %s", tc.tasks, strings.Join(tc.extra, " ")), func(t *testing.T) {
			p := start(t, "srun", env, "srun", args([]string{"-n", strconv.Itoa(tc.tasks), "--chdir", tmp, bin},
				small, []string{"--op", "allreduce,allgather"}, tc.extra)...)
			if code := p.wait(t, 120*time.Second); code != 0 {
				t.Fatalf("srun exit %d\nstderr:\n%s\nstdout:\n%s", code, p.errOut.String(), p.out.String())
			}
			checkTable(t, p.out.String(), tc.ranks, 2*7, []string{"fp32"})
			noBoards(t, tmp)
		})
	}
	// hccl_test's launch line: no --backend, -p the tasks per node.
	srun := func(t *testing.T, tasks int, extra ...string) (*proc, int) {
		p := start(t, "srun", env, "srun", args([]string{"-n", strconv.Itoa(tasks), "--chdir", tmp, bin}, launchedSmall, extra)...)
		return p, p.wait(t, 120*time.Second)
	}
	t.Run("srun -n 4 -p 4, no --backend", func(t *testing.T) {
		p, code := srun(t, 4, "--op", "allreduce,allgather", "-p", "4")
		if code != 0 {
			t.Fatalf("srun exit %d\nstderr:\n%s\nstdout:\n%s", code, p.errOut.String(), p.out.String())
		}
		if h := strings.Count(p.out.String(), "# hccl-test "); h != 1 {
			t.Errorf("%d tables, want 1 (rank 0's)", h)
		}
		checkTableOn(t, "proc", p.out.String(), 4, 2*7, []string{"fp32"})
		noBoards(t, tmp)
	})
	t.Run("srun -n 2 -p 4", func(t *testing.T) {
		p, code := srun(t, 2, "-p", "4")
		refusedEverywhere(t, p, code, 2, "--ranks 4: under a launcher -p is the ranks per node", "SLURM_STEP_TASKS_PER_NODE=2 at SLURM_NODEID=0", "give -p 2")
	})
	t.Run("srun -n 2 --backend shm", func(t *testing.T) {
		p, code := srun(t, 2, "--backend", "shm")
		refusedEverywhere(t, p, code, 2, "--backend shm: this process was started by srun (Slurm)", "leave --backend out")
	})
	noLeftovers(t, bin)
}
