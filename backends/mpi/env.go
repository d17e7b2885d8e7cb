package mpi

import (
	"fmt"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// This file holds the grammar of the variables the backend reads, built
// without MPI too, so that hccl-test checks them whatever the backend:
// the package registers them (backends.RegisterEnv) in every build, and
// the command imports it in every build.

// init registers the variables the backend reads. EnvSpin's value is
// checked by tcp's grammar (tcp.ParseSpin, 0 to 10ms), which accepts no
// value that ParseSpin refuses: ParseSpin's own check would add no
// refusal, and the user sees tcp's words whatever the packages' order.
func init() {
	backends.RegisterEnv(EnvSpin, nil)
	backends.RegisterEnv(EnvColl, func(v string) error { _, err := ParseColl(v); return err })
}

// Environment variables the backend reads.
const (
	// EnvSpin is how long a wait polls before it sleeps (a duration such as
	// 50us, or 0 to sleep at once); the tcp backend reads it too. Hosts
	// with more ranks than CPUs never poll.
	EnvSpin = "HCCL_TEST_SPIN"
	// EnvColl chooses the MPI calls of --algo native: "nonblocking" (the
	// default: MPI_Iallreduce and the like, waited for by polling, so that
	// --timeout applies) or "blocking" (MPI_Allreduce and the like).
	EnvColl = "HCCL_TEST_MPI_COLL"
)

// DefaultSpin is the polling time of a wait when EnvSpin is not set.
const DefaultSpin = 50 * time.Microsecond

// ParseSpin reads a value of EnvSpin: "" is DefaultSpin, else a duration
// of at least 0.
func ParseSpin(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultSpin, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 50us, or 0", EnvSpin, v)
	}
	return d, nil
}

// ParseColl reads a value of EnvColl: whether native collectives are
// blocking calls ("" is nonblocking).
func ParseColl(v string) (blocking bool, err error) {
	switch v := strings.ToLower(strings.TrimSpace(v)); v {
	case "", "nonblocking":
		return false, nil
	case "blocking":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want nonblocking or blocking", EnvColl, v)
	}
}
