package tcp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/launcher"
)

// Environment variables of the ranks hccl-test starts itself, and the
// shared secret for ranks started by a launcher where the launcher gives
// none (see deriveMeeting). Package launcher reads and checks them.
const (
	EnvRank   = launcher.EnvRank
	EnvSize   = launcher.EnvSize
	EnvMaster = launcher.EnvMaster
	// EnvSecret holds the job's shared secret. hccl-test -p sets it for its
	// children; with a launcher across hosts, set it to the same value on
	// every rank (on one host, and under Open MPI or MPICH, the ranks
	// share one without it).
	EnvSecret = launcher.EnvSecret
	// envParentWatch tells a child that its stdin is a pipe from its
	// parent, whose closing means the parent is gone.
	envParentWatch = launcher.EnvParentPipe
)

// role is what this process is in the world.
type role struct {
	Rank, Size int
	Master     string // rank 0's rendezvous address
	Secret     []byte
	Source     string // what started the rank, for messages
	Child      bool   // started by hccl-test itself
	Local      int    // processes on this host, as the launcher says; 0 unknown
	// LocalSource names the variables that gave Local.
	LocalSource string
	// meet, when not nil, is where the ranks learn rank 0's address and
	// the secret (Master is then "" and, but on rank 0, Secret too).
	meet *meetSpec
	// Backend is the name of the backend the rank runs ("" for tcp), which
	// every rank of the world must share (Hello.Agree).
	Backend string
}

// detectLaunch reports whether this process is a rank started by a launcher
// (or by hccl-test -p), and with what rendezvous address and secret. master
// is --master, used when the launcher gives no rendezvous address; bind is
// --bind. Where nothing gives the address, the rank meets the others as
// deriveMeeting finds (the returned role's meet), and nothing in this
// function waits. A launcher variable that is wrong is a *launcher.Error.
func detectLaunch(getenv func(string) string, master, bind string) (role, bool, error) {
	env, err := launcher.Read(getenv)
	if err != nil || env.Family == "" {
		return role{}, false, err
	}
	r := role{Rank: env.Rank, Size: env.Size, Source: env.Source, Child: env.Family == launcher.HCCLTest,
		Local: env.LocalSize, LocalSource: env.LocalSource}
	from := "rendezvous address" // what gave it, for an error
	switch {
	case env.Master != "":
		r.Master, from = env.Master, EnvMaster
	case master != "":
		r.Master, from = master, "--master"
	case env.MasterAddr != "":
		r.Master, from = env.MasterAddr, "MASTER_ADDR and MASTER_PORT"
	default:
		r, err := deriveMeeting(env, r, bind)
		return r, true, err
	}
	if err := checkAddress(r.Master); err != nil {
		return role{}, true, fmt.Errorf("%s %q: %w", from, r.Master, err)
	}
	if r.Secret, err = launchSecret(env); err != nil {
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
	r, ok, err := detectLaunch(getenv, o.Master, o.Bind)
	if !ok || err != nil {
		return backends.Launch{}, ok, err
	}
	return backends.Launch{Rank: r.Rank, Size: r.Size, Source: r.Source, Local: r.Local, LocalSource: r.LocalSource}, true, nil
}

// newSecret returns a fresh random secret for a job hccl-test starts.
func newSecret() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported systems
	return []byte(hex.EncodeToString(b))
}
