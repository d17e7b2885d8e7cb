package tcp

import (
	"fmt"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Options are the tcp backend's own settings (backends.Config.Options).
// The zero Options, like a nil one, start the ranks on loopback with the
// default connect timeout.
type Options struct {
	// Master is rank 0's rendezvous address, host:port; "" lets the
	// backend choose (ranks it starts itself) or take its launcher's.
	Master string
	// Bind is the address or network interface that ranks listen on;
	// "" means loopback.
	Bind string
	// ConnectTimeout limits setting the world up: the rendezvous, and
	// connecting each link; 0 takes DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// OpTimeout is the limit of one op (-T): a rank process this process
	// started that stays stopped (SIGSTOP, a debugger) for that long ends
	// the run at once, whatever rank 0 is doing; 0 leaves stopped ranks
	// to the ops' own limits.
	OpTimeout time.Duration
	// PerProcess is how many ranks each rank process hosts, each its own
	// endpoint (nccl-tests' threads x GPUs); 0 or 1 is one. Process p
	// hosts ranks p x PerProcess to p x PerProcess + PerProcess - 1, so a
	// launcher's n processes make a world of n x PerProcess ranks.
	PerProcess int
	// Args are the command-line arguments the ranks this process starts
	// itself are given (the same program, the same flags).
	Args []string
}

// options returns cfg's Options, checked: the zero value for nil, an error
// naming the type for another backend's.
func options(cfg backends.Config) (Options, error) {
	var o Options
	switch v := cfg.Options.(type) {
	case nil:
	case Options:
		o = v
	case *Options:
		if v != nil {
			o = *v
		}
	default:
		return Options{}, backends.OptionsError(Name, v, "tcp.Options")
	}
	if o.PerProcess < 0 {
		return Options{}, fmt.Errorf("ranks per process must not be negative, got %d", o.PerProcess)
	}
	if o.OpTimeout < 0 {
		return Options{}, fmt.Errorf("op timeout must not be negative, got %v", o.OpTimeout)
	}
	if o.ConnectTimeout < 0 {
		return Options{}, fmt.Errorf("connect timeout must not be negative, got %v", o.ConnectTimeout)
	}
	return o, nil
}

// Options makes tcp's options from the world's settings
// (backends.OptionsMaker).
func (Backend) Options(s backends.Settings) any {
	return Options{Master: s.Master, Bind: s.Bind, ConnectTimeout: s.ConnectTimeout, OpTimeout: s.OpTimeout, Args: s.Args, PerProcess: s.PerProcess}
}
