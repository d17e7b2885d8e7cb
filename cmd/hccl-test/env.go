package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/launcher"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/traffic"
)

// The environment the command honours. Every variable cmd reads is read
// here, by readEnv, once per command and before its flags are parsed; the
// grammar of each value stays with what it configures (parseHCCLRetry in
// retry.go, checkGOMAXPROCS in gomaxprocs.go, coll.ParseHCCLAlgo, which
// parse.go calls once it knows the ops). A flag always wins over its
// variable.
//
//	Variable              Commands         Sets                                  Against its flag
//	GOMAXPROCS            sweep, scenario  nothing: refused unless 1 to the     (no flag)
//	                                       CPUs, as every rank process takes it
//	HCCL_EXEC_TIMEOUT     sweep, scenario  the default of World.Timeout, in     --timeout wins
//	                                       seconds
//	HCCL_CONNECT_TIMEOUT  sweep, scenario  the default of World.ConnectTimeout, --connect-timeout wins
//	                                       in seconds
//	HCCL_OP_RETRY_ENABLE  sweep            Faults.Retry: a level at 1 turns     --retry wins
//	                                       re-runs on, MaxCnt of them
//	HCCL_OP_RETRY_PARAMS  sweep            with ENABLE on, Retry (MaxCnt) and   --retry, --retry-hold and
//	                                       the defaults of RetryHold and        --retry-interval win
//	                                       RetryInterval (ms)
//	HCCL_ALGO             sweep            Sweep.OpAlgos, per collective        --algo wins: HCCL_ALGO is
//	                                       (level0:NA;level1:H-D_R)             then not parsed
//	HCCL_TEST_CPUPROFILE  sweep            the file a CPU profile of the run    (no flag)
//	                                       is written to (go tool pprof)
//	NCCL_TESTS_MIN_BW     sweep            Outputs.MinBusBW, in GB/s: the run   (no flag)
//	                                       fails below 0.9 x it (nccl-tests)
//	NCCL_TESTS_ALLTOALLV_ sweep            Sweep.Traffic: MATRIX_FILE (with     --traffic wins
//	MATRIX_FILE, _SCALE,                   its SCALE) or the pattern's SPREAD,
//	_SPREAD,                               as traffic.ReadEnv reads them;
//	_PRINT_SUMMARY                         PRINT_SUMMARY Outputs.RankSummary:
//	                                       each rank's bytes after each
//	                                       alltoallv row, as # lines
//	NCCL_TESTS_SPLIT,     sweep            a rank's color, the colors the       --groups or --group wins
//	NCCL_TESTS_SPLIT_MASK                  layout and group of --groups and
//	                                       --group (ncclsplit.go)
//
// Read below cmd, by what they configure, and checked here too whenever
// they are set, before any rank starts: HCCL_TEST_KERNELS (package
// dtype's reduction kernels, dtype.CheckKernels); the launchers' variables
// (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, RANK and WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT) and HCCL_TEST_RANK, HCCL_TEST_WORLD_SIZE, HCCL_TEST_MASTER
// and HCCL_TEST_SECRET (package backends/launcher reads them all, for
// backends/tcp, which sets the last four for the rank processes it
// starts, and backends/mpi). The variables a backend's package reads
// (HCCL_TEST_SPIN: tcp and mpi poll; HCCL_TEST_MPI_COLL: mpi) are its own,
// registered with their grammar (backends.RegisterEnv) and checked
// (backends.CheckEnv) whatever the backend. Any other name under
// HCCL_TEST_ or HCCL_OP_RETRY_ is refused (checkOwnVars).

// envHelp is --help's section on the environment: the variables above,
// and those the backends read.
const envHelp = `
Environment:
  HCCL_EXEC_TIMEOUT, HCCL_CONNECT_TIMEOUT  seconds: the defaults of --timeout, --connect-timeout
  HCCL_OP_RETRY_ENABLE, HCCL_OP_RETRY_PARAMS  HCCL's re-execution: the defaults of --retry,
                        --retry-hold and --retry-interval
  HCCL_ALGO             HCCL's choice of algorithm (level0:NA;level1:H-D_R) when --algo is not given
  HCCL_TEST_SECRET      tcp: the job's shared secret, the same on every rank, where the launcher
                        gives none: needed with --master or MASTER_ADDR (under Open MPI's mpirun,
                        its per-job key serves instead) and under srun across nodes; not under
                        mpirun (Open MPI, MPICH) or srun with every rank on one host, where rank 0
                        hands its address and a fresh secret to the job's ranks alone
  MASTER_ADDR, MASTER_PORT  tcp: rank 0's rendezvous address, as --master (torchrun sets them)
  OMPI_*, PMI_*, SLURM_*, RANK/WORLD_SIZE  tcp: the rank and world size, from mpirun (Open MPI,
                        MPICH), srun or torchrun; under srun across nodes, the first node of
                        SLURM_STEP_NODELIST at port 20000 + (job x 32 + step) mod 10000 is rank 0's;
                        each launcher's all or none (a rank without a size is refused); Slurm's
                        without SLURM_STEP_ID (a batch script, salloc) are the job's, not a rank's
  HCCL_TEST_KERNELS     portable: the portable Go reduction kernels; auto (as unset): the fastest
                        this CPU runs
  HCCL_TEST_SPIN        tcp: how long a waiting rank polls its socket before sleeping (1ms;
                        0 off, also the 200us of yielding polls with more ranks than CPUs)
  GOMAXPROCS            threads of Go code per process, 1 to the CPUs
  HCCL_TEST_CPUPROFILE  write a CPU profile of the run to this file (go tool pprof)
  NCCL_TESTS_MIN_BW     GB/s: the footer's Avg bus bandwidth (every row) says FAILED, and the run
                        exits 3, below 0.9 x this, as nccl-tests
  NCCL_TESTS_SPLIT, NCCL_TESTS_SPLIT_MASK  nccl-tests' split of the ranks by color ("MOD 2",
                        "DIV 4", "AND 0x3"; a hex mask): runs as the --groups and --group it
                        lays out, when neither flag is given
`

// envCPUProfile names the file of a CPU profile of the run, for finding
// where its time goes (go tool pprof).
const envCPUProfile = "HCCL_TEST_CPUPROFILE"

// envCommand says whose variables readEnv reads: the scenario command
// honours fewer than the sweep.
type envCommand int

const (
	envSweep    envCommand = iota // hccl-test [flags]
	envScenario                   // hccl-test scenario
)

// environment is what the variables of the table above say.
type environment struct {
	// execTimeout and connectTimeout replace the defaults of --timeout
	// and --connect-timeout; 0 when not set.
	execTimeout, connectTimeout time.Duration
	// retry is HCCL's operator re-execution (sweep only).
	retry hcclRetry
	// algo is HCCL_ALGO as set, algoSet whether it is set, even empty
	// (sweep only).
	algo    string
	algoSet bool
	// cpuProfile is the file of HCCL_TEST_CPUPROFILE, "" for none (sweep
	// only).
	cpuProfile string
	// minBusBW is NCCL_TESTS_MIN_BW in GB/s, 0 when not set (sweep only).
	minBusBW float64
	// split is NCCL_TESTS_SPLIT_MASK or NCCL_TESTS_SPLIT, nil when neither
	// is set (sweep only).
	split *ncclSplit
	// alltoallv is nccl-tests' NCCL_TESTS_ALLTOALLV_* variables (sweep
	// only): the default of --traffic when alltoallv.Set.
	alltoallv traffic.Env
}

// readEnv reads the variables cmd honours through lookup (os.LookupEnv),
// and refuses a bad value as one error naming the variable and the value,
// in the order the command has always reported them. names lists the
// variables set (os.Environ), for ownVars' check of every HCCL_TEST_* and
// HCCL_OP_RETRY_* name. Every variable is checked whenever it is set, even
// where a flag or another variable makes it moot: the launchers' (package
// launcher), and those of retry and HCCL_TEST_KERNELS for every command.
func readEnv(lookup func(string) (string, bool), names []string, cmd envCommand) (environment, error) {
	getenv := func(name string) string { v, _ := lookup(name); return v }
	var env environment
	if err := checkGOMAXPROCS(getenv); err != nil {
		return env, err
	}
	if err := checkOwnVars(names, getenv); err != nil {
		return env, err
	}
	if _, err := launcher.Read(getenv); err != nil {
		return env, err
	}
	var err error
	if env.retry, err = parseHCCLRetry(getenv); err != nil {
		return env, err
	}
	if cmd != envSweep {
		env.retry = hcclRetry{} // the scenario runs no re-executions
	}
	if env.execTimeout, err = envSeconds("HCCL_EXEC_TIMEOUT", getenv("HCCL_EXEC_TIMEOUT")); err != nil {
		return env, err
	}
	if env.connectTimeout, err = envSeconds("HCCL_CONNECT_TIMEOUT", getenv("HCCL_CONNECT_TIMEOUT")); err != nil {
		return env, err
	}
	if cmd == envSweep {
		env.algo, env.algoSet = lookup("HCCL_ALGO")
		env.cpuProfile = getenv(envCPUProfile)
		if env.minBusBW, err = envGBps("NCCL_TESTS_MIN_BW", getenv("NCCL_TESTS_MIN_BW")); err != nil {
			return env, err
		}
		if env.split, err = parseNCCLSplit(getenv); err != nil {
			return env, err
		}
		if env.alltoallv, err = traffic.ReadEnv(lookup); err != nil {
			return env, err
		}
	}
	return env, nil
}

// ownVars are the variables of hccl-test's own prefixes (ownPrefixes)
// that some part of it reads, each with the check of its value (nil: any
// value, or checked where it is read). Each check is the grammar of the
// package that reads the variable, applied whatever --backend says.
var ownVars = map[string]func(string) error{
	launcher.EnvRank: nil, launcher.EnvSize: nil, launcher.EnvMaster: nil, // launcher.Read
	launcher.EnvSecret: nil, launcher.EnvParentPipe: nil,
	dtype.KernelsEnv:       dtype.CheckKernels,
	envCPUProfile:          nil,
	"HCCL_OP_RETRY_ENABLE": nil, // parseHCCLRetry
	"HCCL_OP_RETRY_PARAMS": nil,
}

// ownPrefixes start the names of the variables hccl-test reads itself: one
// of these names that no part of it reads is a mistake (HCCL_TEST_KERNEL
// for HCCL_TEST_KERNELS), refused rather than ignored.
var ownPrefixes = []string{"HCCL_TEST_", "HCCL_OP_RETRY_"}

// checkOwnVars refuses, among names (NAME=value, as os.Environ), a
// variable of ownPrefixes that neither ownVars lists nor a backend's
// package registered (backends.RegisterEnv), or whose check refuses its
// value.
func checkOwnVars(names []string, getenv func(string) string) error {
	for _, kv := range names {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(ownPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		check, known := ownVars[name]
		if !known {
			registered, err := backends.CheckEnv(name, getenv(name))
			if !registered {
				names := slices.Sorted(slices.Values(append(sortedNames(ownVars), backends.EnvNames()...)))
				return fmt.Errorf("%s=%q: hccl-test reads no such variable (it reads %s)", name, getenv(name), strings.Join(names, ", "))
			}
			if err != nil {
				return err
			}
			continue
		}
		if v := getenv(name); check != nil && v != "" {
			if err := check(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortedNames returns m's keys in order.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// envSeconds reads the value v of the variable name, a positive number of
// seconds, as HCCL_EXEC_TIMEOUT and HCCL_CONNECT_TIMEOUT hold; "" (not
// set) is 0.
func envSeconds(name, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	t, err := limits.Duration(v, limits.Seconds, 1)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a positive number of seconds: %w", name, v, err)
	}
	return t, nil
}

// envGBps reads the value v of the variable name, a positive, finite
// number of GB/s (nccl-tests' NCCL_TESTS_MIN_BW); "" (not set) is 0.
func envGBps(name, v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > limits.MaxRate/1e9 {
		return 0, fmt.Errorf("%s=%q: want a positive number of GB/s, at most %g", name, v, limits.MaxRate/1e9)
	}
	return f, nil
}
