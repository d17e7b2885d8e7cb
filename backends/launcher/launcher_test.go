package launcher

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// env is a getenv over m.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// with returns base with the pairs kv set ("" unsets).
func with(base map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

// TestRead: each launcher's environment, whole, half-set and malformed.
// A refusal names the variable and its value, on one line.
func TestRead(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	sock := strconv.Itoa(fds[0])
	file, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	session := t.TempDir()

	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
		"OMPI_MCA_ess_base_jobid": "1909719041", "OMPI_MCA_orte_jobfam_session_dir": session}
	mpich := map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2", "PMI_FD": sock, "MPI_LOCALNRANKS": "2"}
	// What a task of srun -n 4 sees (a real Slurm of one node).
	srun := map[string]string{"SLURM_PROCID": "2", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_LOCALID": "2",
		"SLURM_NODEID": "0", "SLURM_NNODES": "1", "SLURM_JOB_ID": "42", "SLURM_JOBID": "42", "SLURM_STEP_ID": "0",
		"SLURM_STEPID": "0", "SLURM_JOB_NODELIST": "vm", "SLURM_STEP_NODELIST": "vm", "SLURM_TASKS_PER_NODE": "4",
		"SLURM_SUBMIT_DIR": "/home/u", "SLURM_CLUSTER_NAME": "c"}
	// A batch script's own environment (sbatch -n 8), and an allocation's
	// (salloc -N 2): the job's variables, no step. Not a rank.
	sbatch := map[string]string{"SLURM_JOB_ID": "43", "SLURM_JOBID": "43", "SLURM_NTASKS": "8", "SLURM_NPROCS": "8",
		"SLURM_NNODES": "1", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_NODELIST": "vm", "SLURM_NODELIST": "vm",
		"SLURM_TASKS_PER_NODE": "8", "SLURM_SUBMIT_DIR": "/home/u", "SLURM_CLUSTER_NAME": "c", "SLURM_CPUS_ON_NODE": "2"}
	sbatchTask0 := with(sbatch, "SLURM_PROCID", "0", "SLURM_LOCALID", "0", "SLURM_NODEID", "0", "SLURM_GTIDS", "0")
	salloc := map[string]string{"SLURM_JOB_ID": "44", "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "node[1-2]"}
	torch := map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
		"MASTER_ADDR": "node01", "MASTER_PORT": "29500"}
	own := map[string]string{EnvRank: "3", EnvSize: "4", EnvMaster: "127.0.0.1:4000", EnvSecret: "s", EnvParentPipe: "1"}

	tests := []struct {
		name   string
		env    map[string]string
		family Family
		rank   int
		size   int
		local  int
		errHas string // a refusal: the line starts with it
	}{
		{name: "nothing", env: map[string]string{}},
		{name: "hccl-test -p child", env: own, family: HCCLTest, rank: 3, size: 4},
		{name: "open mpi", env: ompi, family: OpenMPI, rank: 1, size: 4, local: 4},
		{name: "mpich", env: mpich, family: MPICH, rank: 0, size: 2, local: 2},
		{name: "srun task", env: srun, family: Slurm, rank: 2, size: 4, local: 4},
		{name: "srun task, old names", env: with(srun, "SLURM_JOB_ID", "", "SLURM_STEP_ID", "", "SLURM_NTASKS", ""), family: Slurm, rank: 2, size: 4, local: 4},
		// srun -N 2 -n 5: 3 tasks on node 0, 2 on node 1; the step's list
		// before the job's.
		{name: "srun task on node 1 of 2", env: with(srun, "SLURM_NODEID", "1", "SLURM_NNODES", "2", "SLURM_NTASKS", "5", "SLURM_NPROCS", "5", "SLURM_TASKS_PER_NODE", "3,2"),
			family: Slurm, rank: 2, size: 5, local: 2},
		{name: "srun task, step's tasks per node first", env: with(srun, "SLURM_NODEID", "1", "SLURM_NNODES", "3", "SLURM_NTASKS", "8", "SLURM_NPROCS", "8",
			"SLURM_TASKS_PER_NODE", "4(x2)", "SLURM_STEP_TASKS_PER_NODE", "3(x2),2"), family: Slurm, rank: 2, size: 8, local: 3},
		{name: "srun task of one node, no tasks per node", env: with(srun, "SLURM_TASKS_PER_NODE", ""), family: Slurm, rank: 2, size: 4, local: 4},
		{name: "srun task of two nodes, no node id", env: with(srun, "SLURM_NODEID", "", "SLURM_NNODES", "2", "SLURM_TASKS_PER_NODE", "2(x2)"), family: Slurm, rank: 2, size: 4},
		{name: "srun task, --ntasks-per-node", env: with(srun, "SLURM_TASKS_PER_NODE", "", "SLURM_NNODES", "2", "SLURM_NTASKS_PER_NODE", "2"), family: Slurm, rank: 2, size: 4, local: 2},
		{name: "torchrun", env: torch, family: Torchrun, rank: 1, size: 2, local: 2},
		{name: "sbatch script, no step", env: sbatch},
		{name: "sbatch script with its task 0 variables, no step", env: sbatchTask0},
		{name: "salloc allocation", env: salloc},
		{name: "open mpi under srun: open mpi first", env: with(srun, "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "8"), family: OpenMPI, rank: 0, size: 8},

		// Half-set: a rank without a size, a size without a rank.
		{name: "RANK without WORLD_SIZE", env: map[string]string{"RANK": "1"}, errHas: `RANK="1": set without WORLD_SIZE`},
		{name: "WORLD_SIZE without RANK", env: map[string]string{"WORLD_SIZE": "2"}, errHas: `WORLD_SIZE="2": set without RANK`},
		{name: "LOCAL_RANK alone", env: map[string]string{"LOCAL_RANK": "0"}, errHas: `LOCAL_RANK="0": set without RANK and WORLD_SIZE`},
		{name: "OMPI size without rank", env: map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, errHas: `OMPI_COMM_WORLD_SIZE="4": set without OMPI_COMM_WORLD_RANK`},
		{name: "OMPI local size alone", env: map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, errHas: `OMPI_COMM_WORLD_LOCAL_SIZE="2": set without OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE`},
		{name: "PMI_RANK without PMI_SIZE", env: map[string]string{"PMI_RANK": "0"}, errHas: `PMI_RANK="0": set without PMI_SIZE`},
		{name: "PMI_FD alone", env: map[string]string{"PMI_FD": sock}, errHas: `PMI_FD="` + sock + `": set without PMI_RANK and PMI_SIZE`},
		{name: "hccl-test rank without size", env: map[string]string{EnvRank: "1"}, errHas: `HCCL_TEST_RANK="1": set without HCCL_TEST_WORLD_SIZE`},
		{name: "srun step without a rank", env: with(srun, "SLURM_PROCID", ""), errHas: `SLURM_STEP_ID="0": set without SLURM_PROCID`},
		{name: "srun step without a size", env: with(srun, "SLURM_NTASKS", "", "SLURM_NPROCS", ""), errHas: `SLURM_PROCID="2": set without SLURM_NTASKS`},
		{name: "srun step without a job", env: with(srun, "SLURM_JOB_ID", "", "SLURM_JOBID", ""), errHas: `SLURM_STEP_ID="0": set without SLURM_JOB_ID`},
		{name: "MASTER_ADDR without MASTER_PORT", env: with(torch, "MASTER_PORT", ""), errHas: `MASTER_ADDR="node01": set without MASTER_PORT`},
		{name: "MASTER_PORT without MASTER_ADDR", env: map[string]string{"MASTER_PORT": "29500"}, errHas: `MASTER_PORT="29500": set without MASTER_ADDR`},

		// Numbers are numbers, in range.
		{name: "rank not a number", env: with(torch, "RANK", "one"), errHas: `RANK="one": want a rank of the WORLD_SIZE=2, a whole number from 0 to 1`},
		{name: "rank outside the world", env: with(torch, "RANK", "2"), errHas: `RANK="2": want a rank`},
		{name: "negative rank", env: with(ompi, "OMPI_COMM_WORLD_RANK", "-1"), errHas: `OMPI_COMM_WORLD_RANK="-1"`},
		{name: "size 0", env: with(ompi, "OMPI_COMM_WORLD_SIZE", "0"), errHas: `OMPI_COMM_WORLD_SIZE="0": want a number of ranks, a whole number from 1`},
		{name: "size huge", env: with(torch, "WORLD_SIZE", "99999999999999999999"), errHas: `WORLD_SIZE="99999999999999999999"`},
		{name: "local size not a number", env: with(ompi, "OMPI_COMM_WORLD_LOCAL_SIZE", "abc"), errHas: `OMPI_COMM_WORLD_LOCAL_SIZE="abc": want the ranks on this host, of the OMPI_COMM_WORLD_SIZE=4`},
		{name: "local size past the world", env: with(torch, "LOCAL_WORLD_SIZE", "3"), errHas: `LOCAL_WORLD_SIZE="3"`},
		{name: "MPI_LOCALNRANKS not a number", env: with(mpich, "MPI_LOCALNRANKS", "two"), errHas: `MPI_LOCALNRANKS="two"`},
		{name: "slurm step id not a number", env: with(srun, "SLURM_STEP_ID", "x"), errHas: `SLURM_STEP_ID="x": want the step id`},
		{name: "slurm job id not a number", env: with(srun, "SLURM_JOB_ID", "4x"), errHas: `SLURM_JOB_ID="4x": want the job id`},
		{name: "slurm node count 0", env: with(srun, "SLURM_NNODES", "0"), errHas: `SLURM_NNODES="0": want a number of nodes`},
		{name: "slurm tasks per node not a number", env: with(srun, "SLURM_NTASKS_PER_NODE", "2(x2)"), errHas: `SLURM_NTASKS_PER_NODE="2(x2)"`},
		{name: "slurm tasks per node list malformed", env: with(srun, "SLURM_TASKS_PER_NODE", "2(x"), errHas: `SLURM_TASKS_PER_NODE="2(x": "2(x": want N or N(xM)`},
		{name: "slurm tasks per node list negative", env: with(srun, "SLURM_STEP_TASKS_PER_NODE", "-1"), errHas: `SLURM_STEP_TASKS_PER_NODE="-1"`},
		{name: "slurm tasks per node list huge", env: with(srun, "SLURM_TASKS_PER_NODE", "1(x99999999)"), errHas: `SLURM_TASKS_PER_NODE="1(x99999999)"`},
		{name: "slurm tasks on this node past the step", env: with(srun, "SLURM_TASKS_PER_NODE", "5"), errHas: `SLURM_TASKS_PER_NODE="5": 5 tasks on the node of this task`},
		{name: "slurm no task on this task's node", env: with(srun, "SLURM_TASKS_PER_NODE", "0,4"), errHas: `SLURM_TASKS_PER_NODE="0,4": 0 tasks`},
		{name: "slurm node id past the list", env: with(srun, "SLURM_NODEID", "2", "SLURM_TASKS_PER_NODE", "2(x2)"), errHas: `SLURM_NODEID="2": want a node of the SLURM_TASKS_PER_NODE=2(x2)`},
		{name: "slurm node id not a number", env: with(srun, "SLURM_NODEID", "n1"), errHas: `SLURM_NODEID="n1"`},
		{name: "MASTER_PORT not a port", env: with(torch, "MASTER_PORT", "http"), errHas: `MASTER_PORT="http": want rank 0's port, a number from 1 to 65535`},
		{name: "MASTER_PORT 0", env: with(torch, "MASTER_PORT", "0"), errHas: `MASTER_PORT="0"`},
		{name: "MASTER_PORT past 65535", env: with(torch, "MASTER_PORT", "65536"), errHas: `MASTER_PORT="65536"`},

		// Hosts are hosts; descriptors and directories exist.
		{name: "MASTER_ADDR with a space", env: with(torch, "MASTER_ADDR", "bad host!"), errHas: `MASTER_ADDR="bad host!": "bad host!" is not a host name or an IP address`},
		{name: "MASTER_ADDR an IPv6 address", env: with(torch, "MASTER_ADDR", "::1"), family: Torchrun, rank: 1, size: 2, local: 2},
		{name: "MASTER_ADDR with an empty label", env: with(torch, "MASTER_ADDR", "a..b"), errHas: `MASTER_ADDR="a..b"`},
		{name: "HCCL_TEST_MASTER without a port", env: with(own, EnvMaster, "node01"), errHas: `HCCL_TEST_MASTER="node01": want host:port`},
		{name: "HCCL_TEST_MASTER bad host", env: with(own, EnvMaster, "no/de:1"), errHas: `HCCL_TEST_MASTER="no/de:1"`},
		{name: "HCCL_TEST_PARENT_PIPE other than 1", env: with(own, EnvParentPipe, "yes"), errHas: `HCCL_TEST_PARENT_PIPE="yes"`},
		{name: "slurm node list malformed", env: with(srun, "SLURM_STEP_NODELIST", "node[1-"), errHas: `SLURM_STEP_NODELIST="node[1-": "node[1-": a [ without its ]`},
		{name: "slurm node list with a bad name", env: with(srun, "SLURM_JOB_NODELIST", "a b"), errHas: `SLURM_JOB_NODELIST="a b"`},
		{name: "PMI_FD not a number", env: with(mpich, "PMI_FD", "abc"), errHas: `PMI_FD="abc": want the number of the descriptor`},
		{name: "PMI_FD stdin", env: with(mpich, "PMI_FD", "0"), errHas: `PMI_FD="0"`},
		{name: "PMI_FD not open", env: with(mpich, "PMI_FD", "987654"), errHas: `PMI_FD="987654": descriptor 987654 is not open`},
		{name: "PMI_FD a file", env: with(mpich, "PMI_FD", strconv.Itoa(int(file.Fd()))), errHas: "is a regular file, not the socket"},
		{name: "session dir missing", env: with(ompi, "OMPI_MCA_orte_jobfam_session_dir", "/nonexistent"), errHas: `OMPI_MCA_orte_jobfam_session_dir="/nonexistent": not a directory of this machine: no such file or directory`},
		{name: "session dir a file", env: with(ompi, "OMPI_MCA_orte_jobfam_session_dir", file.Name()), errHas: "is a regular file, not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(env(tc.env))
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %+v, %v; want one line with %q", got, err, tc.errHas)
				}
				if _, ok := err.(*Error); !ok {
					t.Errorf("error %T, want a *launcher.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Family != tc.family || got.Rank != tc.rank || got.Size != tc.size || got.LocalSize != tc.local {
				t.Errorf("got %s rank %d of %d, %d local; want %s rank %d of %d, %d local",
					got.Family, got.Rank, got.Size, got.LocalSize, tc.family, tc.rank, tc.size, tc.local)
			}
		})
	}
}

// TestReadSlurmStep: what a step says about its job and nodes.
func TestReadSlurmStep(t *testing.T) {
	e, err := Read(env(map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "SLURM_JOBID": "7", "SLURM_STEPID": "2",
		"SLURM_STEP_NUM_NODES": "2", "SLURM_NNODES": "3", "SLURM_STEP_NODELIST": "n[07-08]", "SLURM_JOB_NODELIST": "n[07-09]"}))
	if err != nil {
		t.Fatal(err)
	}
	s := e.Slurm
	if s.Job != 7 || s.Step != 2 || s.Nodes != 2 || s.NodesVar != "SLURM_STEP_NUM_NODES" ||
		strings.Join(s.Hosts, " ") != "n07 n08" || s.ListVar != "SLURM_STEP_NODELIST" {
		t.Errorf("got %+v", s)
	}
}

func TestExpandHosts(t *testing.T) {
	tests := []struct {
		list   string
		want   string // joined by spaces
		errHas string
	}{
		{list: "vm", want: "vm"},
		{list: "node[01-04,07]", want: "node01 node02 node03 node04 node07"},
		{list: "a,b[1-2],c", want: "a b1 b2 c"},
		{list: "rack[1-2]-n[8-9]", want: "rack1-n8 rack1-n9 rack2-n8 rack2-n9"},
		{list: "n[9-11]", want: "n9 n10 n11"},
		{list: "n[098-101]", want: "n098 n099 n100 n101"},
		{list: "", errHas: "empty host name"},
		{list: "a,,b", errHas: "empty host name"},
		{list: "n[1-", errHas: "without its ]"},
		{list: "n1]", errHas: "without its ["},
		{list: "n[4-2]", errHas: "not a number or a range"},
		{list: "n[x]", errHas: "not a number or a range"},
		{list: "n[0-99999999]", errHas: "more than 65536 hosts"},
		{list: "a[0-999]b[0-999]", errHas: "more than 65536 hosts"},
	}
	for _, tc := range tests {
		t.Run(tc.list, func(t *testing.T) {
			got, err := expandHosts(tc.list)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tc.errHas)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for mode, want := range map[os.FileMode]string{
		0o644: "a regular file", os.ModeDir | 0o755: "a directory", os.ModeNamedPipe: "a named pipe (FIFO)",
		os.ModeSymlink: "a symbolic link", os.ModeSocket: "a socket", os.ModeDevice | os.ModeCharDevice: "a character device",
		os.ModeDevice: "a block device",
	} {
		if got := Kind(mode); got != want {
			t.Errorf("Kind(%v) = %q, want %q", mode, got, want)
		}
	}
}
