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
// --connect-timeout's tcp's, each replaced by its variable of the
// environment when that is set (env.go); the flag wins over both.
func addLaunchFlags(fs *pflag.FlagSet, w *kit.World, h worldFlagHelp) error {
	timeout := durationValue(w.Timeout)
	if err := envDuration("HCCL_EXEC_TIMEOUT", &timeout); err != nil {
		return err
	}
	connect := durationValue(tcp.DefaultConnectTimeout)
	if err := envDuration("HCCL_CONNECT_TIMEOUT", &connect); err != nil {
		return err
	}
	w.Timeout, w.ConnectTimeout = timeout.duration(), connect.duration()
	fs.VarP((*durationValue)(&w.Timeout), "timeout", "T", h.timeout)
	fs.Var((*durationValue)(&w.ConnectTimeout), "connect-timeout", h.connect)
	fs.StringVar(&w.Master, "master", "", h.master)
	fs.StringVar(&w.Bind, "bind", "", h.bind)
	return nil
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
