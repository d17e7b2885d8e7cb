//go:build mpi && cgo

package mpi

// End-to-end tests under Open MPI's mpirun: the hccl-test binary built with
// -tags mpi sweeps every collective with our algorithms and with MPI's, and
// this test binary runs the transport's contract checks as the ranks of an
// MPI world (transport_test.go). MPI gives one rank per process, so
// backendtest.Run, which needs a whole world in one process, cannot run.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needMpirun returns Open MPI's mpirun, or skips the test.
func needMpirun(t *testing.T) string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun is not installed (apt-get install openmpi-bin)")
	}
	if v, _ := exec.Command(mpirun, "--version").CombinedOutput(); !bytes.Contains(v, []byte("Open MPI")) {
		t.Skipf("mpirun is not Open MPI's (the test uses its flags): %q", strings.TrimSpace(string(v)))
	}
	return mpirun
}

// buildBinary builds hccl-test with -tags mpi into the test's directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hccl-test")
	out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "github.com/hccl-test/hccl-test/cmd/hccl-test").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	return bin
}

// cleanEnv is this process's environment without anything that would make
// a program think a launcher started it, or change its settings.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OMPI_") || strings.HasPrefix(name, "PMI_") || strings.HasPrefix(name, "PMIX_") ||
			strings.HasPrefix(name, "HCCL_") || name == "GOMAXPROCS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// mpirunArgs are the mpirun flags of every test run: as root, more ranks
// than CPUs, shared memory between the ranks.
func mpirunArgs(np int) []string {
	return []string{"--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(np), "--mca", "btl", "self,vader"}
}

// run runs name with args and env, and returns its output and exit code.
// Past limit it is stopped (SIGTERM, which mpirun passes on to its ranks,
// then SIGKILL) and the test fails: a hang. Whatever the process group
// left behind is killed.
func run(t *testing.T, limit time.Duration, env []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of our own process group
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s hung: stopped after %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), limit, o.String(), e.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", name, err)
	}
	return o.String(), e.String(), code
}

// sweep is a sweep of every collective that runs in seconds: five types
// (fp16 and bf16 reduce through MPI user ops), a reduction with and without
// a division, every root, in place and out of
// place, 1 KiB to 64 KiB.
var sweep = []string{"--backend", "mpi", "--op", "all", "-d", "int8,fp16,bf16,fp32,fp64", "-o", "sum,avg", "-r", "-1",
	"--placement", "both", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "--link-bw", "10GB/s", "-T", "60s"}

// TestMpirunSweep runs the sweep on 1 to 4 ranks under mpirun, with our
// algorithms (auto) and MPI's (native, nonblocking and blocking), and on 3
// ranks with both side by side (--algo native,auto), and checks that rank
// 0 alone printed a table with every row correct.
func TestMpirunSweep(t *testing.T) {
	mpirun := needMpirun(t)
	bin := buildBinary(t)
	for np := 1; np <= 4; np++ {
		for _, v := range []struct{ algo, coll string }{{"auto", ""}, {"native", "nonblocking"}, {"native", "blocking"}, {"native,auto", "blocking"}} {
			if strings.Contains(v.algo, ",") && np != 3 {
				continue // MPI's and ours side by side, once
			}
			name := fmt.Sprintf("np%d/%s", np, v.algo)
			if v.coll != "" {
				name += "/" + v.coll
			}
			t.Run(name, func(t *testing.T) {
				args := append(mpirunArgs(np), "-x", EnvColl+"="+v.coll, bin)
				args = append(args, sweep...)
				stdout, stderr, code := run(t, 3*time.Minute, cleanEnv(), mpirun, append(args, "--algo", v.algo)...)
				if code != 0 {
					t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
				}
				checkTable(t, stdout, np, v.algo, sweepRows(np), nil)
			})
		}
	}
}

// sweepRows is the rows of the sweep on np ranks, per algorithm: per type
// and size, allreduce and reducescatter x 2 reductions; allgather,
// alltoall, sendrecv; broadcast, gather, scatter x np roots; reduce x 2
// reductions x np roots; alltoallv, allgatherv, reducescatterv x 2
// reductions. 5 types, 3 sizes.
func sweepRows(np int) int { return 5 * 3 * (2*2 + 3 + 3*np + 2*np + 4) }

// TestMpirunTraffic runs the variable-size collectives with MPI's own
// (MPI_Alltoallv, MPI_Allgatherv, MPI_Reduce_scatter, nonblocking and
// blocking) on 4 ranks with uneven counts: a Zipf routing, and a matrix
// file whose ranks 0 and 2 send nothing and whose rank 1 receives nothing
// but from rank 3 (columns of 176, 32, 48 and 1024 bytes: imbalance
// 1024/320 = 3.20, hot rank 3), so that empty blocks, empty sides and
// one-element blocks go through MPI and the checker.
func TestMpirunTraffic(t *testing.T) {
	mpirun := needMpirun(t)
	bin := buildBinary(t)
	matrix := filepath.Join(t.TempDir(), "m4.txt")
	if err := os.WriteFile(matrix, []byte("0 0 0 0\n160 0 48 0\n0 0 0 0\n16 32 0 1024\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--backend", "mpi", "--algo", "native", "--op", "alltoallv,allgatherv,reducescatterv",
		"-d", "int8,bf16,fp32", "-o", "sum,avg", "--placement", "both", "-n", "2", "-w", "1", "-T", "60s"}
	for _, v := range []struct {
		name, coll string
		args       []string
		sizes      int
		imbal, hot string // "" for any imbalance over 1 and any rank
	}{
		{"zipf/nonblocking", "nonblocking", []string{"--traffic", "zipf:s=1.5,tokens=0,hidden=16", "-b", "1K", "-e", "64K", "-f", "8"}, 3, "", ""},
		{"file/nonblocking", "nonblocking", []string{"--traffic", "file:" + matrix, "-b", "1K", "-e", "1K"}, 1, "3.20", "3"},
		{"file/blocking", "blocking", []string{"--traffic", "file:" + matrix, "-b", "1K", "-e", "1K"}, 1, "3.20", "3"},
	} {
		t.Run(v.name, func(t *testing.T) {
			args := append(mpirunArgs(4), "-x", EnvColl+"="+v.coll, bin)
			args = append(append(args, base...), v.args...)
			stdout, stderr, code := run(t, 3*time.Minute, cleanEnv(), mpirun, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			// Per type and size: alltoallv, allgatherv, reducescatterv x 2
			// reductions.
			checkTable(t, stdout, 4, "native", 3*v.sizes*4, func(t *testing.T, col map[string]string, line string) {
				imbal, err := strconv.ParseFloat(col["imbal"], 64)
				switch {
				case v.imbal == "" && (err != nil || imbal <= 1):
					t.Errorf("imbalance %q, want over 1 (uneven counts): %q", col["imbal"], line)
				case v.imbal != "" && (col["imbal"] != v.imbal || col["hot"] != v.hot):
					t.Errorf("imbalance %q, hot rank %q; want %s and %s: %q", col["imbal"], col["hot"], v.imbal, v.hot, line)
				}
			})
		})
	}
}

// checkTable checks a complete, correct table of a run on np ranks: one
// header, want rows per algorithm that all ran algo (when native) with 0
// wrong elements in both placements (out of place only for alltoallv,
// which has no in-place call), and the footer; with "native,auto", each
// row once with MPI's collectives and once with auto's choice. Columns
// are found by the names in the table's header; row, when not nil, checks
// each row's out-of-place columns further.
func checkTable(t *testing.T, stdout string, np int, algo string, want int, row func(t *testing.T, col map[string]string, line string)) {
	t.Helper()
	ran := map[string]int{} // rows by what ran: native, or auto:NAME as auto
	both := algo == "native,auto"
	if n := strings.Count(stdout, "# hccl-test "); n != 1 {
		t.Errorf("%d table headers, want 1 (rank 0's)", n)
	}
	if h := fmt.Sprintf("# backend mpi  ranks %d ", np); !strings.Contains(stdout, h) {
		t.Errorf("no header %q in stdout:\n%s", h, stdout)
	}
	var names []string // column names, as the rows' fields
	op := ""           // the collective of the rows that follow
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == "#" && f[1] == "size" {
			names = f[1:]
		}
		if len(f) == 2 && f[0] == "#" {
			op = f[1]
		}
		if !strings.HasPrefix(line, " ") {
			continue
		}
		rows++
		cols, placements := names, 2
		if op == "alltoallv" {
			// Out of place only: the columns up to the second "time".
			if i := slices.Index(names[slices.Index(names, "time")+1:], "time"); i >= 0 {
				cols, placements = names[:slices.Index(names, "time")+1+i], 1
			}
		}
		if len(f) != len(cols) {
			t.Errorf("%s row of %d fields, want %d of the header's columns %v: %q", op, len(f), len(cols), names, line)
			continue
		}
		if row != nil {
			col := map[string]string{}
			for i, name := range cols {
				if _, seen := col[name]; !seen {
					col[name] = f[i]
				}
			}
			row(t, col, line)
		}
		wrongs := 0
		for i, name := range cols {
			switch {
			case name == "#wrong":
				wrongs++
				if f[i] != "0" {
					t.Errorf("row with %s wrong elements: %q", f[i], line)
				}
			case name == "algo" && algo == "native" && f[i] != "native":
				t.Errorf("row ran %s, want native: %q", f[i], line)
			case name == "algo" && both:
				kind, _, _ := strings.Cut(f[i], ":")
				ran[kind]++
			}
		}
		if wrongs != placements {
			t.Errorf("%s row: %d #wrong columns, want %d: %q", op, wrongs, placements, line)
		}
	}
	if both {
		if ran["native"] != want || ran["auto"] != want {
			t.Errorf("rows ran %v, want %d native and %d auto", ran, want, want)
		}
		want *= 2
	}
	if rows != want {
		t.Errorf("%d rows, want %d\n%s", rows, want, stdout)
	}
	if !strings.Contains(stdout, "# wrong elements: 0 OK") {
		t.Errorf("footer lacks \"# wrong elements: 0 OK\":\n%s", stdout)
	}
}

// TestWithoutMpirun: without a launcher the backend runs one rank (MPI's
// singleton), and refuses more with a line that says how to run.
func TestWithoutMpirun(t *testing.T) {
	needMpirun(t) // a singleton MPI process still needs Open MPI's runtime
	bin := buildBinary(t)
	stdout, stderr, code := run(t, time.Minute, cleanEnv(), bin, append(sweep, "-p", "1", "--op", "allreduce,alltoall", "--algo", "native")...)
	if code != 0 {
		t.Fatalf("-p 1 without mpirun: exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	checkTableRows(t, stdout)

	_, stderr, code = run(t, time.Minute, cleanEnv(), bin, "--backend", "mpi", "-b", "1K", "-e", "1K")
	if code != 2 {
		t.Errorf("8 ranks without mpirun: exit %d, want 2 (refused before anything runs)", code)
	}
	if !strings.Contains(stderr, "mpirun -np 8 hccl-test --backend mpi") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line saying to run under mpirun -np 8", stderr)
	}
}

// checkTableRows checks that a table has rows and that all are correct.
func checkTableRows(t *testing.T, stdout string) {
	t.Helper()
	if !strings.Contains(stdout, "# wrong elements: 0 OK") || !strings.Contains(stdout, "\n ") {
		t.Errorf("no correct table:\n%s", stdout)
	}
}

// TestTransportUnderMpirun runs TestTransportRank (transport_test.go) as
// every rank of worlds of 2 and 3 processes.
func TestTransportUnderMpirun(t *testing.T) {
	mpirun := needMpirun(t)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np%d", np), func(t *testing.T) {
			args := append(mpirunArgs(np), "-x", envChild+"=1", os.Args[0], "-test.run", "^TestTransportRank$", "-test.v", "-test.count", "1")
			stdout, stderr, code := run(t, 2*time.Minute, cleanEnv(envChild+"=1"), mpirun, args...)
			if code != 0 || strings.Count(stdout, "--- PASS: TestTransportRank") != np {
				t.Fatalf("exit %d, want 0 and %d ranks passing\nstdout:\n%s\nstderr:\n%s", code, np, stdout, stderr)
			}
		})
	}
}
