package main

import (
	"strings"
	"testing"
)

// TestBadEnvironment runs the binary under each launcher's environment
// gone wrong, and under variables of hccl-test's own with a bad value or
// name: each is refused before any rank starts, with exit 2 and one line
// on stderr naming the variable and its value, whatever the backend. The
// environment of a Slurm batch script or allocation (the job's variables,
// no step) is no launcher's: -p starts its own world there.
func TestBadEnvironment(t *testing.T) {
	bin := buildBinary(t)
	run := []string{"-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--link-bw", "10GB/s"}
	tcp := append([]string{"--backend", "tcp", "-p", "2"}, run...)
	ompi := []string{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_MCA_ess_base_jobid=77"}
	srun := []string{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=5", "SLURM_STEP_ID=0", "SLURM_NNODES=1", "SLURM_STEP_NODELIST=vm"}
	torch := []string{"RANK=1", "WORLD_SIZE=2", "MASTER_PORT=29500", "HCCL_TEST_SECRET=s"}
	tests := []struct {
		name string
		env  []string
		args []string
		want string // the line, after "hccl-test: " (or "hccl-test scenario: "), starts with it
	}{
		// Class 5: malformed launcher variables.
		{"PMI_FD not a number", []string{"PMI_RANK=0", "PMI_SIZE=2", "PMI_FD=abc"}, tcp, `PMI_FD="abc": want the number of the descriptor`},
		{"PMI_FD not open", []string{"PMI_RANK=0", "PMI_SIZE=2", "PMI_FD=999"}, tcp, `PMI_FD="999": descriptor 999 is not open`},
		{"Open MPI session directory missing", append(ompi, "OMPI_MCA_orte_jobfam_session_dir=/nonexistent"), tcp,
			`OMPI_MCA_orte_jobfam_session_dir="/nonexistent": not a directory of this machine`},
		{"MASTER_ADDR not a host", append(torch, "MASTER_ADDR=bad host!"), tcp, `MASTER_ADDR="bad host!": "bad host!" is not a host name`},
		{"MASTER_PORT not a port", append(torch, "MASTER_ADDR=127.0.0.1", "MASTER_PORT=http"), tcp, `MASTER_PORT="http"`},
		{"Slurm node list malformed", append(srun, "SLURM_STEP_NODELIST=node[1-"), tcp, `SLURM_STEP_NODELIST="node[1-"`},
		{"local size not a number", append(ompi, "OMPI_COMM_WORLD_LOCAL_SIZE=abc"), tcp, `OMPI_COMM_WORLD_LOCAL_SIZE="abc": want the ranks on this host`},
		{"one rank of mpirun on shm", []string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2"}, append([]string{"--backend", "shm"}, run...), `--backend shm: this process was started by mpirun (Open MPI)`},
		{"one task of srun on sim", srun, append([]string{"--backend", "sim"}, run...), `--backend sim: this process was started by srun (Slurm)`},

		// Class 6: half-set launcher environments, bad values of our own.
		{"RANK without WORLD_SIZE", []string{"RANK=1"}, tcp, `RANK="1": set without WORLD_SIZE`},
		{"OMPI size without a rank", []string{"OMPI_COMM_WORLD_SIZE=4"}, tcp, `OMPI_COMM_WORLD_SIZE="4": set without OMPI_COMM_WORLD_RANK`},
		{"half-set on shm too", []string{"WORLD_SIZE=4"}, run, `WORLD_SIZE="4": set without RANK`},
		{"srun step without a rank", []string{"SLURM_JOB_ID=5", "SLURM_STEP_ID=0", "SLURM_NTASKS=2"}, tcp, `SLURM_STEP_ID="0": set without SLURM_PROCID`},
		{"MASTER_ADDR without MASTER_PORT", []string{"MASTER_ADDR=node01"}, tcp, `MASTER_ADDR="node01": set without MASTER_PORT`},
		{"HCCL_TEST_KERNELS misspelt value", []string{"HCCL_TEST_KERNELS=portabel"}, run, `HCCL_TEST_KERNELS="portabel": want portable`},
		{"HCCL_TEST_ misspelt name", []string{"HCCL_TEST_KERNEL=portable"}, run, `HCCL_TEST_KERNEL="portable": hccl-test reads no such variable`},
		{"HCCL_OP_RETRY_PARAMS with retry off", []string{"HCCL_OP_RETRY_PARAMS=bogus"}, run, `HCCL_OP_RETRY_PARAMS="bogus"`},
		{"HCCL_OP_RETRY_PARAMS with --retry", []string{"HCCL_OP_RETRY_PARAMS=MaxCnt:99"}, append([]string{"--retry", "1"}, run...), `HCCL_OP_RETRY_PARAMS="MaxCnt:99"`},
		{"HCCL_OP_RETRY_ misspelt name", []string{"HCCL_OP_RETRY_ENABLED=L1:1"}, run, `HCCL_OP_RETRY_ENABLED="L1:1": hccl-test reads no such variable`},
		{"HCCL_TEST_SPIN too long on shm", []string{"HCCL_TEST_SPIN=1h"}, run, `HCCL_TEST_SPIN="1h": want 0 to 10ms`},
		{"HCCL_TEST_SPIN not a duration on sim", []string{"HCCL_TEST_SPIN=fast"}, append([]string{"--backend", "sim"}, run...), `HCCL_TEST_SPIN="fast"`},
		{"HCCL_TEST_MPI_COLL on shm", []string{"HCCL_TEST_MPI_COLL=blockng"}, run, `HCCL_TEST_MPI_COLL="blockng": want nonblocking or blocking`},
		{"HCCL_TEST_MPI_COLL on tcp", []string{"HCCL_TEST_MPI_COLL=1"}, tcp, `HCCL_TEST_MPI_COLL="1"`},
		{"scenario, half-set", []string{"RANK=0"}, []string{"scenario", "examples/moe-ep.json"}, `RANK="0": set without WORLD_SIZE`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBinaryEnv(t, bin, cleanEnv(tc.env...), tc.args...)
			line := strings.TrimPrefix(strings.TrimPrefix(stderr, "hccl-test: "), "hccl-test scenario: ")
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(line, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr, tc.want)
			}
		})
	}
}

// TestSlurmJobEnvironment: hccl-test -p inside a batch script (sbatch -n
// 8: the job's variables, task 0's, no step) and inside an allocation
// (salloc) runs its own world, on every backend that starts ranks.
func TestSlurmJobEnvironment(t *testing.T) {
	bin := buildBinary(t)
	sbatch := []string{"SLURM_JOB_ID=43", "SLURM_JOBID=43", "SLURM_NTASKS=8", "SLURM_NPROCS=8", "SLURM_NNODES=1",
		"SLURM_JOB_NUM_NODES=1", "SLURM_JOB_NODELIST=vm", "SLURM_NODELIST=vm", "SLURM_TASKS_PER_NODE=8",
		"SLURM_SUBMIT_DIR=/tmp", "SLURM_CLUSTER_NAME=c", "SLURM_CPUS_ON_NODE=2", "SLURM_PROCID=0", "SLURM_LOCALID=0",
		"SLURM_NODEID=0", "SLURM_GTIDS=0"}
	salloc := []string{"SLURM_JOB_ID=44", "SLURM_JOBID=44", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=node[1-2]", "SLURM_NTASKS=4"}
	for _, env := range []struct {
		name string
		vars []string
	}{{"sbatch", sbatch}, {"salloc", salloc}} {
		for _, backend := range []string{"shm", "tcp", "proc"} {
			t.Run(env.name+"/"+backend, func(t *testing.T) {
				stdout, stderr, code := runBinaryEnv(t, bin, cleanEnv(env.vars...), "--backend", backend, "-p", "4",
					"-b", "1K", "-e", "4K", "-n", "1", "-w", "0", "--link-bw", "10GB/s")
				if code != 0 || !strings.Contains(stdout, "# wrong elements: 0 OK") {
					t.Fatalf("exit %d, stderr %q; want a run of its own", code, stderr)
				}
				if !strings.Contains(stdout, "ranks 4") {
					t.Errorf("the table is not of -p 4's ranks:\n%s", stdout)
				}
			})
		}
	}
}
