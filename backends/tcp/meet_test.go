package tcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

func TestSlurmPort(t *testing.T) {
	seen := map[int]bool{}
	for job := uint64(1); job < 50; job++ {
		for step := uint64(0); step < 4; step++ {
			p := slurmPort(job, step)
			if p < SlurmPortBase || p >= SlurmPortBase+SlurmPortSpan {
				t.Fatalf("slurmPort(%d, %d) = %d, outside [%d, %d)", job, step, p, SlurmPortBase, SlurmPortBase+SlurmPortSpan)
			}
			if seen[p] {
				t.Fatalf("slurmPort(%d, %d) = %d, taken by an earlier job or step", job, step, p)
			}
			seen[p] = true
		}
	}
	if p := slurmPort(7, 4294967294); p < SlurmPortBase || p >= SlurmPortBase+SlurmPortSpan {
		t.Errorf("the batch step's port %d is out of range", p)
	}
}

// TestDeriveMeeting: what each launcher's environment, with no --master,
// makes of the rendezvous, and the one line when it cannot.
func TestDeriveMeeting(t *testing.T) {
	session := t.TempDir()
	if err := os.Chmod(session, 0o700); err != nil {
		t.Fatal(err)
	}
	pmiFD := testSocket(t)
	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
		"OMPI_MCA_ess_base_jobid": "1909719041", "OMPI_MCA_orte_jobfam_session_dir": session}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	mpich := map[string]string{"PMI_RANK": "0", "PMI_SIZE": "4", "MPI_LOCALNRANKS": "4", "PMI_FD": strconv.Itoa(pmiFD)}
	slurmEnv := map[string]string{"SLURM_PROCID": "2", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "77", "SLURM_STEP_ID": "3",
		"SLURM_NNODES": "1", "SLURM_STEP_NODELIST": "vm"}
	slurmMany := with(slurmEnv, "SLURM_NNODES", "2", "SLURM_STEP_NUM_NODES", "2", "SLURM_STEP_NODELIST", "node[07-08]")
	tests := []struct {
		name   string
		env    map[string]string
		master string
		bind   string
		want   role
		errHas []string
	}{
		{name: "open mpi, one host", env: ompi,
			want: role{Rank: 1, Size: 4, meet: &meetSpec{dir: session, name: "hccl-test-ompi-1909719041", job: "Open MPI job 1909719041"}}},
		{name: "open mpi 5", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "prterun-vm-12@1"},
			want: role{Rank: 0, Size: 2, meet: &meetSpec{name: "hccl-test-ompi-prterun-vm-12_1", job: "Open MPI job prterun-vm-12@1"}}},
		{name: "open mpi, two hosts", env: with(ompi, "OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
			errHas: []string{"several hosts", "OMPI_COMM_WORLD_LOCAL_SIZE=2 of OMPI_COMM_WORLD_SIZE=4", "--master HOST:PORT", "--bind"}},
		{name: "open mpi, two hosts, --master: its job key is the secret", env: with(ompi, "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
			"OMPI_MCA_orte_precondition_transports", "d51d46b11358009f-6c1e61204ee0cbdc"), master: "node01:29500",
			want: role{Rank: 1, Size: 4, Master: "node01:29500", Secret: []byte("ompi-job-key:d51d46b11358009f-6c1e61204ee0cbdc")}},
		{name: "open mpi, --master, no job key", env: ompi, master: "node01:29500",
			errHas: []string{EnvSecret, "mpirun -x " + EnvSecret}},
		{name: "mpich", env: mpich, want: role{Rank: 0, Size: 4, meet: &meetSpec{pmiFD: pmiFD, job: "MPICH job"}}},
		{name: "mpich, no PMI_FD", env: with(mpich, "PMI_FD", ""), errHas: []string{"PMI_FD", "--master", "-genv " + EnvSecret}},
		{name: "mpich, two hosts", env: with(mpich, "MPI_LOCALNRANKS", "2"), errHas: []string{"MPI_LOCALNRANKS=2 of PMI_SIZE=4", "--bind"}},
		{name: "mpich, two hosts, --bind", env: with(mpich, "MPI_LOCALNRANKS", "2"), bind: "eth0",
			want: role{Rank: 0, Size: 4, meet: &meetSpec{pmiFD: pmiFD, job: "MPICH job"}}},
		{name: "slurm, one node", env: slurmEnv,
			want: role{Rank: 2, Size: 4, meet: &meetSpec{name: "hccl-test-slurm-77.3", job: "Slurm job 77 step 3"}}},
		{name: "slurm, one node, old names", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_JOBID": "5",
			"SLURM_STEPID": "0", "SLURM_JOB_NODELIST": "vm", "SLURM_CLUSTER_NAME": "c/1"},
			want: role{Rank: 0, Size: 2, meet: &meetSpec{name: "hccl-test-slurm-c_1-5.0", job: "Slurm job 5 step 0"}}},
		{name: "slurm, two nodes", env: slurmMany,
			errHas: []string{"node07:22467", "--bind", EnvSecret, "before srun"}},
		{name: "slurm, two nodes, secret given", env: with(slurmMany, EnvSecret, "s"),
			errHas: []string{"--bind"}},
		{name: "slurm, two nodes, all given", env: with(slurmMany, EnvSecret, "s"), bind: "eth0",
			want: role{Rank: 2, Size: 4, Master: "node07:22467", Secret: []byte("s")}},
		{name: "slurm, bad node list", env: with(slurmMany, "SLURM_STEP_NODELIST", "node[1-"), errHas: []string{"without its ]"}},
		{name: "slurm, several nodes, no node list", env: with(slurmMany, "SLURM_STEP_NODELIST", ""),
			errHas: []string{"on 2 nodes (SLURM_STEP_NUM_NODES=2)", "without a node list", "--master"}},
		{name: "slurm, no node count, no node list", env: with(slurmEnv, "SLURM_NNODES", "", "SLURM_STEP_NODELIST", ""),
			errHas: []string{"an unknown number of nodes", "without a node list", "--master"}},
		{name: "open mpi, session directory open to others", env: with(ompi, "OMPI_MCA_orte_jobfam_session_dir", openDir(t)),
			errHas: []string{"OMPI_MCA_orte_jobfam_session_dir=", "others may enter it"}},
		{name: "torchrun without MASTER_ADDR", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, errHas: []string{"MASTER_ADDR"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := detectLaunch(func(k string) string { return tc.env[k] }, tc.master, tc.bind)
			if !ok && err == nil {
				t.Fatal("not seen as launched")
			}
			if tc.errHas != nil {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Rank != tc.want.Rank || got.Size != tc.want.Size || got.Master != tc.want.Master || string(got.Secret) != string(tc.want.Secret) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (got.meet == nil) != (tc.want.meet == nil) || got.meet != nil && *got.meet != *tc.want.meet {
				t.Errorf("meet %+v, want %+v", got.meet, tc.want.meet)
			}
		})
	}
}

// testSocket returns the descriptor of one end of a socket pair, as a
// process manager's connection (PMI_FD) is, closed when t ends.
func testSocket(t *testing.T) int {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return fds[0]
}

// openDir returns a fresh directory that others may enter.
func openDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// testBoard is a board in a fresh private directory.
func testBoard(t *testing.T) *board {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := newBoard(dir, "hccl-test-job", "test job")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoardRoundTrip(t *testing.T) {
	b := testBoard(t)
	if err := b.publish(context.Background(), "127.0.0.1:4000", []byte("s3cret"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(b.path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("board file: %v, mode %v; want 0600", err, fi.Mode())
	}
	reader := &board{path: b.path, job: b.job}
	addr, secret, err := reader.await(context.Background(), time.Now().Add(time.Second))
	if err != nil || addr != "127.0.0.1:4000" || string(secret) != "s3cret" {
		t.Fatalf("await = %q, %q, %v", addr, secret, err)
	}
	reader.close() // a reader removes nothing
	if _, err := os.Stat(b.path); err != nil {
		t.Fatalf("a reader's close removed the file: %v", err)
	}
	b.close()
	if _, err := os.Stat(b.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rank 0's close left the file: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(b.path)); len(entries) != 0 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// TestBoardHostile: a file left by a dead job is waited past (and the
// timeout says so), a new rank 0 replaces it, and a file or directory
// others could have written is refused at once.
func TestBoardHostile(t *testing.T) {
	write := func(t *testing.T, b *board, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(b.path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(b.path, mode); err != nil {
			t.Fatal(err)
		}
	}
	good := func(pid int, start uint64) string {
		return boardMagic + "\naddr 127.0.0.1:1\nsecret 6869\npid " + strconv.Itoa(pid) + "\nstart " + strconv.FormatUint(start, 10) + "\n"
	}
	t.Run("stale file from a dead process", func(t *testing.T) {
		b := testBoard(t)
		write(t, b, good(deadPID(t), 1), 0o600)
		_, _, err := b.await(context.Background(), time.Now().Add(100*time.Millisecond))
		if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "which is gone") || !strings.Contains(err.Error(), b.path) {
			t.Fatalf("got %v, want a timeout naming the file and its dead writer", err)
		}
		// The new job's rank 0 replaces it, and its ranks read the new one.
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = (&board{path: b.path, job: b.job}).publish(context.Background(), "127.0.0.1:2", []byte("new"), time.Time{})
		}()
		addr, secret, err := b.await(context.Background(), time.Now().Add(5*time.Second))
		if err != nil || addr != "127.0.0.1:2" || string(secret) != "new" {
			t.Fatalf("after rank 0 published: %q %q %v", addr, secret, err)
		}
	})
	t.Run("pid reused by another process", func(t *testing.T) {
		b := testBoard(t)
		start := processStart(os.Getpid())
		if start == 0 {
			t.Skip("no /proc/PID/stat here")
		}
		write(t, b, good(os.Getpid(), start+1), 0o600)
		if _, _, err := b.await(context.Background(), time.Now().Add(50*time.Millisecond)); !errors.Is(err, backends.ErrTimeout) {
			t.Fatalf("got %v, want the file ignored", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		b := testBoard(t)
		write(t, b, "hello\n", 0o600)
		_, _, err := b.await(context.Background(), time.Now().Add(50*time.Millisecond))
		if err == nil || !strings.Contains(err.Error(), "not one hccl-test wrote") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		b := testBoard(t)
		write(t, b, good(os.Getpid(), processStart(os.Getpid())), 0o644)
		_, _, err := b.await(context.Background(), time.Now().Add(5*time.Second))
		if err == nil || !strings.Contains(err.Error(), "mode 0644") || !strings.Contains(err.Error(), "not trusted") {
			t.Fatalf("got %v, want the file refused", err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		b := testBoard(t)
		other := filepath.Join(t.TempDir(), "x")
		write(t, &board{path: other}, good(os.Getpid(), processStart(os.Getpid())), 0o600)
		if err := os.Symlink(other, b.path); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.await(context.Background(), time.Now().Add(5*time.Second)); err == nil || !strings.Contains(err.Error(), "is a symbolic link, not a regular file") {
			t.Fatalf("got %v, want the link refused", err)
		}
	})
	t.Run("a FIFO", func(t *testing.T) {
		b := testBoard(t)
		if err := syscall.Mkfifo(b.path, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := b.await(context.Background(), time.Now().Add(5*time.Second))
		if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") || strings.Contains(err.Error(), "p---") {
			t.Fatalf("got %v, want the FIFO named in words", err)
		}
	})
	t.Run("another user's file", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("only root can give a file to another user")
		}
		b := testBoard(t)
		write(t, b, good(os.Getpid(), processStart(os.Getpid())), 0o600)
		if err := os.Chown(b.path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.await(context.Background(), time.Now().Add(5*time.Second)); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("got %v, want the file refused", err)
		}
	})
	t.Run("directory open to others", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := newBoard(dir, "x", "test job"); err == nil || !strings.Contains(err.Error(), "mode 0755") {
			t.Fatalf("got %v, want the directory refused", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		b := testBoard(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := b.await(ctx, time.Now().Add(5*time.Second)); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}
