package main

import (
	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/kit"
)

// worldFlagHelp is the help of the flags that set the parts both commands
// share, kit.World and kit.Faults: the sweep and the scenario command
// define the same flags into the same fields, each in its own words.
type worldFlagHelp struct {
	timeout, connect, master, bind string // --timeout, --connect-timeout, --master, --bind
	inject                         string // --inject, before inject.Grammar
}

// addLaunchFlags defines --timeout, --connect-timeout, --master and --bind
// on fs, each set straight into w. --timeout's default is w.Timeout and
// --connect-timeout's tcp's, each replaced by its variable of env when that
// is set (env.go); the flag wins over both.
func addLaunchFlags(fs *pflag.FlagSet, w *kit.World, env environment, h worldFlagHelp) {
	w.ConnectTimeout = tcp.DefaultConnectTimeout
	if env.execTimeout > 0 {
		w.Timeout = env.execTimeout
	}
	if env.connectTimeout > 0 {
		w.ConnectTimeout = env.connectTimeout
	}
	fs.VarP((*durationValue)(&w.Timeout), "timeout", "T", h.timeout)
	fs.Var((*durationValue)(&w.ConnectTimeout), "connect-timeout", h.connect)
	fs.StringVar(&w.Master, "master", "", h.master)
	fs.StringVar(&w.Bind, "bind", "", h.bind)
}

// addFaultFlags defines --inject and --seed on fs, set into f.InjectText
// and f.Seed; parseFaults reads f.Inject from them once fs is parsed.
func addFaultFlags(fs *pflag.FlagSet, f *kit.Faults, h worldFlagHelp) {
	fs.StringVar(&f.InjectText, "inject", "", h.inject+inject.Grammar)
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of --inject's random choices")
}

// parseFaults parses the faults of --inject into f.Inject.
func parseFaults(f *kit.Faults) error {
	var err error
	f.Inject, err = inject.Parse(f.InjectText)
	return err
}
