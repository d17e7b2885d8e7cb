// Package launcher reads the environment through which a launcher (Open
// MPI's mpirun, MPICH's mpiexec, Slurm's srun, torchrun, or hccl-test -p
// itself) tells a process that it is one rank of a world. Read is the one
// place that reads these variables: it checks every one that is set, and
// each launcher's variables all or none, and returns a typed Env or an
// *Error naming the variable and its value, so that a command can refuse a
// mistake before any rank starts.
package launcher

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Family names a launcher, as messages show it.
type Family string

// The launchers whose variables Read knows, in order of precedence: when
// the variables of several are set, the first gives the rank.
const (
	HCCLTest Family = "hccl-test"
	OpenMPI  Family = "mpirun (Open MPI)"
	MPICH    Family = "mpirun (MPICH/Hydra)"
	Slurm    Family = "srun (Slurm)"
	Torchrun Family = "torchrun"
)

// Variables of the ranks hccl-test starts itself (-p), and the shared
// secret and rendezvous address a user may give any launched rank.
const (
	EnvRank   = "HCCL_TEST_RANK"
	EnvSize   = "HCCL_TEST_WORLD_SIZE"
	EnvMaster = "HCCL_TEST_MASTER"
	EnvSecret = "HCCL_TEST_SECRET"
	// EnvParentPipe tells a child that its stdin is a pipe from its
	// parent, whose closing means the parent is gone.
	EnvParentPipe = "HCCL_TEST_PARENT_PIPE"
)

// MaxSize bounds the world size any launcher variable may give.
const MaxSize = 1 << 20

// Env is what the launcher variables of this process say. The zero value
// (Family "") is a process no launcher started.
type Env struct {
	// Family is the launcher that started this process, "" for none.
	Family Family
	// Rank and Size are this process's rank and the world's processes.
	Rank, Size int
	// Source names the launcher and the variables that gave Rank and
	// Size, for messages: "torchrun (RANK=1 WORLD_SIZE=2)".
	Source string
	// LocalSize is how many of the world's processes share this host, as
	// the launcher says, 0 where it does not; LocalSource names the
	// variables that say it, for messages: "OMPI_COMM_WORLD_LOCAL_SIZE=4".
	LocalSize   int
	LocalSource string

	// Master is HCCL_TEST_MASTER, rank 0's address host:port, "" unset.
	Master string
	// MasterAddr is torchrun's MASTER_ADDR:MASTER_PORT, "" unset.
	MasterAddr string
	// Secret is HCCL_TEST_SECRET, "" unset.
	Secret string
	// ParentPipe says that stdin is a pipe from the parent (EnvParentPipe).
	ParentPipe bool

	// OpenMPI holds Open MPI's job, where Family is OpenMPI.
	OpenMPI OpenMPIJob
	// PMIFD is MPICH's PMI connection (PMI_FD), -1 when not given.
	PMIFD int
	// Slurm holds the step, where Family is Slurm.
	Slurm SlurmStep
}

// OpenMPIJob is what Open MPI's mpirun tells its ranks about their job.
type OpenMPIJob struct {
	// Job is OMPI_MCA_ess_base_jobid, SessionDir the job family's
	// session directory (an existing directory), Namespace Open MPI 5's
	// PMIX_NAMESPACE; each "" when unset.
	Job, SessionDir, Namespace string
	// Key is the job's random key (OMPI_MCA_orte_precondition_transports).
	Key string
}

// Error is a launcher variable whose value is refused.
type Error struct {
	Var, Value string
	// Why says what is wrong and what would be right.
	Why string
}

// Error returns `NAME="value": why`.
func (e *Error) Error() string { return fmt.Sprintf("%s=%q: %s", e.Var, e.Value, e.Why) }

// family is how a launcher's variables make a rank: Rank and Size make it,
// and any of also set without them is half a launcher's environment.
type family struct {
	name       Family
	rank, size string
	also       []string
	local      string // ranks on this host, "" when the launcher says none
}

// families lists the launchers in order of precedence. Slurm is read
// apart (readSlurm): a batch script or an allocation has the job's
// variables without a step, and is no rank.
var families = []family{
	{HCCLTest, EnvRank, EnvSize, []string{EnvParentPipe}, ""},
	{OpenMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
		[]string{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK"}, "OMPI_COMM_WORLD_LOCAL_SIZE"},
	{MPICH, "PMI_RANK", "PMI_SIZE", []string{"PMI_FD", "MPI_LOCALNRANKS", "MPI_LOCALRANKID"}, "MPI_LOCALNRANKS"},
	{Slurm, "SLURM_PROCID", "SLURM_NTASKS", nil, "SLURM_NTASKS_PER_NODE"},
	{Torchrun, "RANK", "WORLD_SIZE", []string{"LOCAL_RANK", "LOCAL_WORLD_SIZE"}, "LOCAL_WORLD_SIZE"},
}

// Read reads and checks the launcher variables through getenv (os.Getenv;
// "" is unset). Every family whose variables are set must be whole, every
// number a number in its range, every host a host name or address, every
// descriptor and directory one that exists; the first launcher of
// families whose rank and size are set started this process.
func Read(getenv func(string) string) (Env, error) {
	env := Env{PMIFD: -1}
	var err error
	for _, f := range families {
		var w world
		if f.name == Slurm {
			w, err = readSlurm(getenv, &env.Slurm)
		} else {
			w, err = f.read(getenv)
		}
		if err != nil {
			return Env{}, err
		}
		if w.ok && env.Family == "" {
			env.Family, env.Rank, env.Size, env.Source = f.name, w.rank, w.size, w.source
			env.LocalSize, env.LocalSource = w.local, w.localSource
		}
	}
	if err := readOwn(getenv, &env); err != nil {
		return Env{}, err
	}
	if err := readOpenMPI(getenv, &env); err != nil {
		return Env{}, err
	}
	if err := readPMIFD(getenv, &env); err != nil {
		return Env{}, err
	}
	return env, nil
}

// world is one family's rank, size and ranks on this host; ok when its
// rank and size are set.
type world struct {
	ok                bool
	rank, size, local int
	source            string
	// localSource names what gave local, "" when nothing did.
	localSource string
}

// read reads f's variables: none, or all with numbers in range.
func (f family) read(getenv func(string) string) (world, error) {
	rs, ss := getenv(f.rank), getenv(f.size)
	if rs == "" && ss == "" {
		for _, v := range f.also {
			if getenv(v) != "" {
				return world{}, halfSet(f.name, v, getenv(v), f.rank+" and "+f.size)
			}
		}
		return world{}, nil
	}
	switch {
	case rs == "":
		return world{}, halfSet(f.name, f.size, ss, f.rank)
	case ss == "":
		return world{}, halfSet(f.name, f.rank, rs, f.size)
	}
	return rankAndSize(f, getenv, rs, ss)
}

// rankAndSize checks the values rs and ss of f's rank and size, and f's
// ranks on this host.
func rankAndSize(f family, getenv func(string) string, rs, ss string) (world, error) {
	size, err := number(f.size, ss, 1, MaxSize, "a number of ranks")
	if err != nil {
		return world{}, err
	}
	rank, err := number(f.rank, rs, 0, size-1, fmt.Sprintf("a rank of the %s=%d", f.size, size))
	if err != nil {
		return world{}, err
	}
	w := world{ok: true, rank: rank, size: size, source: fmt.Sprintf("%s (%s=%s %s=%s)", f.name, f.rank, rs, f.size, ss)}
	if f.local != "" {
		if v := getenv(f.local); v != "" {
			if w.local, err = number(f.local, v, 1, size, fmt.Sprintf("the ranks on this host, of the %s=%d", f.size, size)); err != nil {
				return world{}, err
			}
			w.localSource = f.local + "=" + v
		}
	}
	return w, nil
}

// halfSet is the error of a launcher's variable name, set to value,
// without missing, which the launcher sets with it.
func halfSet(f Family, name, value, missing string) *Error {
	return &Error{Var: name, Value: value,
		Why: fmt.Sprintf("set without %s, which %s sets with it: unset it, or set both (a half-set launcher environment is not a world)", missing, f)}
}

// number reads v, the value of name, as a whole number from lo to hi; what
// says what the number is.
func number(name, v string, lo, hi int, what string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		return 0, &Error{Var: name, Value: v, Why: fmt.Sprintf("want %s, a whole number from %d to %d", what, lo, hi)}
	}
	return n, nil
}

// readOwn reads the variables hccl-test's own ranks carry and that a user
// may give any launched rank: HCCL_TEST_MASTER, HCCL_TEST_SECRET, and
// torchrun's MASTER_ADDR and MASTER_PORT, which any launcher's ranks may
// use as their rendezvous address.
func readOwn(getenv func(string) string, env *Env) error {
	if v := getenv(EnvMaster); v != "" {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			return &Error{Var: EnvMaster, Value: v, Why: "want host:port, rank 0's rendezvous address"}
		}
		if err := checkHost(EnvMaster, v, host); err != nil {
			return err
		}
		if !isPort(port) {
			return &Error{Var: EnvMaster, Value: v, Why: fmt.Sprintf("port %q: want a number from 0 to 65535", port)}
		}
		env.Master = v
	}
	env.Secret = getenv(EnvSecret)
	if v := getenv(EnvParentPipe); v != "" && v != "1" {
		return &Error{Var: EnvParentPipe, Value: v, Why: "set by hccl-test for the ranks it starts, always to 1"}
	}
	env.ParentPipe = getenv(EnvParentPipe) == "1"
	addr, port := getenv("MASTER_ADDR"), getenv("MASTER_PORT")
	switch {
	case addr == "" && port == "":
		return nil
	case addr == "":
		return halfSet(Torchrun, "MASTER_PORT", port, "MASTER_ADDR")
	case port == "":
		return halfSet(Torchrun, "MASTER_ADDR", addr, "MASTER_PORT")
	}
	if err := checkHost("MASTER_ADDR", addr, addr); err != nil {
		return err
	}
	if !isPort(port) || port == "0" {
		return &Error{Var: "MASTER_PORT", Value: port, Why: "want rank 0's port, a number from 1 to 65535"}
	}
	env.MasterAddr = net.JoinHostPort(addr, port)
	return nil
}

// isPort reports whether s is a port number, 0 to 65535.
func isPort(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}
