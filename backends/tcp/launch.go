package tcp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"

	"github.com/hccl-test/hccl-test/backends"
)

// Environment variables of the ranks hccl-test starts itself, and the
// shared secret for ranks started by a launcher where the launcher gives
// none (see deriveMeeting).
const (
	EnvRank   = "HCCL_TEST_RANK"
	EnvSize   = "HCCL_TEST_WORLD_SIZE"
	EnvMaster = "HCCL_TEST_MASTER"
	// EnvSecret holds the job's shared secret. hccl-test -p sets it for its
	// children; with a launcher across hosts, set it to the same value on
	// every rank (on one host, and under Open MPI or MPICH, the ranks
	// share one without it).
	EnvSecret = "HCCL_TEST_SECRET"
	// envParentWatch tells a child that its stdin is a pipe from its
	// parent, whose closing means the parent is gone.
	envParentWatch = "HCCL_TEST_PARENT_PIPE"
)

// role is what this process is in the world.
type role struct {
	Rank, Size int
	Master     string // rank 0's rendezvous address
	Secret     []byte
	Source     string // what started the rank, for messages
	Child      bool   // started by hccl-test itself
	// meet, when not nil, is where the ranks learn rank 0's address and
	// the secret (Master is then "" and, but on rank 0, Secret too).
	meet *meetSpec
}

// launchers lists, in order of precedence, the variables that launchers
// set for the rank and the world size.
var launchers = []backends.LauncherVars{
	{Rank: EnvRank, Size: EnvSize, Name: "hccl-test"},
	{Rank: "OMPI_COMM_WORLD_RANK", Size: "OMPI_COMM_WORLD_SIZE", Name: "mpirun (Open MPI)"},
	{Rank: "PMI_RANK", Size: "PMI_SIZE", Name: "mpirun (MPICH/Hydra)"},
	{Rank: "SLURM_PROCID", Size: "SLURM_NTASKS", Name: "srun (Slurm)"},
	{Rank: "RANK", Size: "WORLD_SIZE", Name: "torchrun"},
}

// launchedWorld finds the rank and world size a launcher set, if any.
func launchedWorld(getenv func(string) string) (backends.Launch, bool, error) {
	return backends.FindLaunch(getenv, launchers)
}

// detectLaunch reports whether this process is a rank started by a launcher
// (or by hccl-test -p), and with what rendezvous address and secret. master
// is --master, used when the launcher gives no rendezvous address; bind is
// --bind. Where nothing gives the address, the rank meets the others as
// deriveMeeting finds (the returned role's meet), and nothing in this
// function waits.
func detectLaunch(getenv func(string) string, master, bind string) (role, bool, error) {
	l, ok, err := launchedWorld(getenv)
	if !ok || err != nil {
		return role{}, ok, err
	}
	r := role{Rank: l.Rank, Size: l.Size, Source: l.Source, Child: getenv(EnvRank) != ""}
	from := "rendezvous address" // what gave it, for an error
	switch {
	case getenv(EnvMaster) != "":
		r.Master, from = getenv(EnvMaster), EnvMaster
	case master != "":
		r.Master, from = master, "--master"
	case getenv("MASTER_ADDR") != "" && getenv("MASTER_PORT") != "":
		r.Master, from = net.JoinHostPort(getenv("MASTER_ADDR"), getenv("MASTER_PORT")), "MASTER_ADDR and MASTER_PORT"
	default:
		r, err := deriveMeeting(getenv, r, bind)
		return r, true, err
	}
	if err := checkAddress(r.Master); err != nil {
		return role{}, true, fmt.Errorf("%s %q: %w", from, r.Master, err)
	}
	if r.Secret, err = launchSecret(getenv, launcherName(getenv), l.Source); err != nil {
		return role{}, true, err
	}
	return r, true, nil
}

// LaunchedWorld implements backends.Launched from the environment: it also
// checks that the rank can reach the rendezvous and prove the secret.
func (Backend) LaunchedWorld(cfg backends.Config) (backends.Launch, bool, error) {
	o, err := options(cfg)
	if err != nil {
		return backends.Launch{}, false, err
	}
	if _, ok, err := detectLaunch(getenv, o.Master, o.Bind); !ok || err != nil {
		return backends.Launch{}, ok, err
	}
	return launchedWorld(getenv)
}

// newSecret returns a fresh random secret for a job hccl-test starts.
func newSecret() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported systems
	return []byte(hex.EncodeToString(b))
}
