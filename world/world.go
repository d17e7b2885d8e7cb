package world

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/syslimits"
)

// World is where a harness runs: the backend, the ranks and how they were
// started and meet, and how long they may take. Both harnesses embed it (a
// sweep's bench.Plan, a step scenario's scenario.Options), so that its
// fields, its checks and the flags that set them are the same in both. Its
// Validate needs nothing outside it; a harness that checks more may run
// ValidateWho, ValidateTimeouts and ValidateMaster in an order of its own.
type World struct {
	// Backend is the registered name of the backend that moves the bytes.
	Backend string
	// Ranks is the world size.
	Ranks int
	// Master is rank 0's rendezvous address, host:port ("": the backend
	// finds it, or needs none); see backends.Config.
	Master string
	// Bind is the address or interface the ranks listen on ("": loopback);
	// see backends.Config.
	Bind string
	// ConnectTimeout bounds setting up: the rendezvous and each connection.
	ConnectTimeout time.Duration
	// Timeout bounds one op; past it the run fails naming the op.
	Timeout time.Duration
	// Args is the command line, which the backend passes to the rank
	// processes it starts; see backends.Config.
	Args []string
	// Log receives the backend's own lines (those of the rank processes it
	// starts); see backends.Config.
	Log io.Writer
	// PerProcess is how many ranks each rank process hosts (tcp: nccl-tests'
	// threads x GPUs); 0 or 1 is one. See tcp.Options.PerProcess.
	PerProcess int
	// Own is the backend's own options its flags gave
	// (backends.FlagDefiner), of a type its package defines; nil takes its
	// defaults. Config hands it to the backend (backends.Settings.Own).
	Own any
	// HostedRanks is how many ranks share this machine's memory; 0 means
	// all of them (one process, or -p on one machine).
	HostedRanks int
	// LaunchedRank is this process's rank when a launcher (or hccl-test -p)
	// started it as one rank of the world; -1 otherwise.
	LaunchedRank int
	// MemLimit is the memory the run may use in bytes (0: no limit):
	// the sweep refuses a plan whose estimate (bench.Plan.Memory) is larger.
	MemLimit int64
	// Limits are the system's limits on this process (memory cgroups,
	// rlimits), from syslimits.Read; the zero value knows none. MemLimit
	// is their Memory's room, and Limits.Memory.Name names it.
	Limits syslimits.Limits
}

// Validate reports the first thing wrong with w as a *FieldError.
func (w World) Validate() error {
	return fielderr.FirstError(w.ValidateWho, w.ValidateTimeouts, w.ValidateMaster)
}

// ValidateWho checks the backend and the number of ranks.
func (w World) ValidateWho() error {
	b, err := w.Resolve()
	if err != nil {
		return fielderr.FieldErrorf("Backend", ": %w", err)
	}
	switch limit := b.Capabilities().RankLimit(); {
	case w.Ranks < 1:
		return fielderr.FieldErrorf("Ranks", " %d: need at least 1 rank", w.Ranks)
	case w.Ranks > limit:
		return fielderr.FieldErrorf("Ranks", " %d: at most %d ranks on the %s backend%s", w.Ranks, limit, w.Backend, moreRanksOn(limit))
	}
	return nil
}

// moreRanksOn names the backends that run worlds larger than limit, as
// ", up to 65536 on sim", or "" when none does.
func moreRanksOn(limit int) string {
	var more []string
	for _, b := range backends.With(func(c backends.Caps) bool { return c.RankLimit() > limit }) {
		more = append(more, fmt.Sprintf("%d on %s", b.Capabilities().RankLimit(), b.Name()))
	}
	if len(more) == 0 {
		return ""
	}
	return " (up to " + strings.Join(more, ", ") + ")"
}

// ValidateTimeouts checks the limits of one op and of setting up.
func (w World) ValidateTimeouts() error {
	switch {
	case w.Timeout <= 0:
		return fielderr.FieldErrorf("Timeout", " %v: must be positive", w.Timeout)
	case w.ConnectTimeout <= 0:
		// 0 would let the backend wait its own default, in silence.
		return fielderr.FieldErrorf("ConnectTimeout", " %v: must be positive", w.ConnectTimeout)
	}
	return nil
}

// ValidateMaster checks the form of the rendezvous address.
func (w World) ValidateMaster() error {
	if w.Master == "" {
		return nil
	}
	if _, port, err := net.SplitHostPort(w.Master); err != nil || port == "" {
		return fielderr.FieldErrorf("Master", " %q: want host:port, rank 0's rendezvous address", w.Master)
	}
	return nil
}

// Faults are the faults a harness injects and how it recovers from them.
// Both harnesses embed it (bench.Plan, scenario.Options). Its Validate
// needs nothing outside it.
type Faults struct {
	// Inject lists the faults to inject.
	Inject inject.Spec
	// InjectText is the text Inject was parsed from, to name it in errors.
	InjectText string
	// Seed seeds the random choices of Inject.
	Seed uint64
	// Retry is how many times a call that failed on a transport error is
	// run again (0: never): HCCL's operator re-execution.
	Retry int
	// RetryHold is the pause between a failure and the first re-run.
	RetryHold time.Duration
	// RetryInterval is the pause between later re-runs.
	RetryInterval time.Duration
	// RetrySource says where Retry came from, for the header.
	RetrySource string
}

// Validate reports the first thing wrong with f as a *FieldError. That
// Inject's ranks are in the world, and that the backend can re-run a call,
// are left to the harness (bench.Plan.Validate, or the backend's
// configuration check).
func (f Faults) Validate() error {
	switch {
	case f.Retry < 0 || f.Retry > MaxRetry:
		return fielderr.FieldErrorf("Retry", " %d: want 0 (off) to %d re-runs per op", f.Retry, MaxRetry)
	case f.RetryHold < 0 || f.RetryHold > MaxRetryPause:
		return fielderr.FieldErrorf("RetryHold", " %v: want 0 to %v", f.RetryHold, MaxRetryPause)
	case f.RetryInterval < 0 || f.RetryInterval > MaxRetryPause:
		return fielderr.FieldErrorf("RetryInterval", " %v: want 0 to %v", f.RetryInterval, MaxRetryPause)
	}
	return nil
}

// Config is the backend configuration of w: the options its backend makes
// of w's settings (Settings), its own options (w.Own) among them, with the
// harness's links l (which a simulator simulates; the zero WorldLinks
// elsewhere); retry whether a call that failed on a transport error may
// be run again.
func (w World) Config(l backends.WorldLinks, retry bool) backends.Config {
	b, _ := w.Resolve() // nil for an unknown name: no options
	var opts any
	if b != nil {
		opts = backends.OptionsFor(b, w.Settings(l))
	}
	return backends.Config{Ranks: w.Ranks, Log: w.Log, Retry: retry, Options: opts}
}

// WritesOutput reports whether this process writes the run's output: it
// hosts rank 0, the rank that collects every result.
func (w World) WritesOutput() bool { return w.LaunchedRank <= 0 }

// MaxRetry and MaxRetryPause bound Faults.Retry and its pauses, as HCCL
// bounds MaxCnt, HoldTime and IntervalTime.
const (
	MaxRetry      = 10
	MaxRetryPause = time.Minute
)
