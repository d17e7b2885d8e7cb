package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/world"
)

// worldFlagHelp is the help of the flags that set the parts both commands
// share, world.World and world.Faults: the sweep and the scenario command
// define the same flags into the same fields, each in its own words.
type worldFlagHelp struct {
	timeout, connect, master, bind string // --timeout, --connect-timeout, --master, --bind
	inject                         string // --inject, before inject.Grammar
}

// addLaunchFlags defines --timeout, --connect-timeout, --master and --bind
// on fs, each set straight into w. --timeout's default is w.Timeout and
// --connect-timeout's tcp's, each replaced by its variable of env when that
// is set (env.go); the flag wins over both.
func addLaunchFlags(fs *pflag.FlagSet, w *world.World, env environment, h worldFlagHelp) {
	w.ConnectTimeout = backends.DefaultConnectTimeout
	if env.execTimeout > 0 {
		w.Timeout = env.execTimeout
	}
	if env.connectTimeout > 0 {
		w.ConnectTimeout = env.connectTimeout
	}
	fs.VarP((*opTimeoutValue)(&w.Timeout), "timeout", "T", h.timeout)
	arg(fs, "timeout", "DURATION")
	fs.Var((*durationValue)(&w.ConnectTimeout), "connect-timeout", h.connect)
	arg(fs, "connect-timeout", "DURATION")
	fs.StringVar(&w.Master, "master", "", h.master)
	arg(fs, "master", "HOST:PORT")
	fs.StringVar(&w.Bind, "bind", "", h.bind)
	arg(fs, "bind", "ADDR|IFACE")
}

// addFaultFlags defines --inject and --seed on fs, set into f.InjectText
// and f.Seed; parseFaults reads f.Inject from them once fs is parsed.
func addFaultFlags(fs *pflag.FlagSet, f *world.Faults, h worldFlagHelp) {
	fs.StringVar(&f.InjectText, "inject", "", h.inject+inject.Grammar)
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of --inject's random choices")
	arg(fs, "inject", "SPEC")
	arg(fs, "seed", "N")
}

// parseFaults parses the faults of --inject into f.Inject.
func parseFaults(f *world.Faults) error {
	var err error
	f.Inject, err = inject.Parse(f.InjectText)
	return err
}

// opTimeoutValue is --timeout's value: a durationValue where 0 is
// nccl-tests' -T 0, no timeout. Every wait here keeps a bound, so 0 is
// the longest limit a user may give (limits.MaxDuration, a week), which
// the header prints as "none"; Ctrl-C and SIGQUIT work as ever.
type opTimeoutValue time.Duration

func (d *opTimeoutValue) String() string { return (*durationValue)(d).String() }
func (d *opTimeoutValue) Type() string   { return "duration" }
func (d *opTimeoutValue) Set(v string) error {
	if err := (*durationValue)(d).Set(v); err != nil {
		return err
	}
	if *d == 0 {
		*d = opTimeoutValue(limits.MaxDuration)
	}
	return nil
}
