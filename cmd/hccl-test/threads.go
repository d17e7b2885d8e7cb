package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/bench"
)

// maxPerProcess bounds -t, -g and their product, as --ranks is bounded.
const maxPerProcess = 4096

// threadFlags are nccl-tests' -t/--nthreads and -g/--ngpus: ranks per
// process = threads x GPUs.
type threadFlags struct{ threads, gpus int }

// addThreadFlags defines -t and -g on fs.
func addThreadFlags(fs *pflag.FlagSet) *threadFlags {
	tf := &threadFlags{}
	fs.VarP(newCount(&tf.threads, 1), "nthreads", "t", "nccl-tests' threads per process: ranks per process = -t x -g; in one process (shm, sim) the world, unless -p gives it; over tcp each process hosts -t x -g ranks, so mpirun -np N makes N x t x g")
	fs.VarP(newCount(&tf.gpus, 1), "ngpus", "g", "nccl-tests' GPUs per thread: a factor of the ranks per process, as -t")
	arg(fs, "nthreads", "N")
	arg(fs, "ngpus", "N")
	return tf
}

// apply sets the world of p from -t and -g, once fs is parsed: on a
// backend whose ranks are goroutines of this process, -t x -g ranks (which
// -p, if given too, must equal); over tcp, -t x -g ranks in each process
// (-p N: N processes). Other backends take one rank per process.
func (tf *threadFlags) apply(fs *pflag.FlagSet, p *bench.Plan) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"nthreads", tf.threads}, {"ngpus", tf.gpus}} {
		if f.v < 1 || f.v > maxPerProcess {
			return fmt.Errorf("--%s %d: want 1 to %d (ranks per process = -t x -g)", f.name, f.v, maxPerProcess)
		}
	}
	if !fs.Changed("nthreads") && !fs.Changed("ngpus") {
		return nil
	}
	per := tf.threads * tf.gpus
	if per > maxPerProcess {
		return fmt.Errorf("-t %d -g %d: %d ranks per process, at most %d", tf.threads, tf.gpus, per, maxPerProcess)
	}
	b, err := p.Resolve()
	if err != nil {
		return nil // the plan's validation names the backends
	}
	switch caps := b.Capabilities(); {
	case caps.InProcess:
		if fs.Changed("ranks") && p.Ranks != per {
			return fmt.Errorf("-p %d and -t %d -g %d: --backend %s runs every rank in this one process, so -t x -g = %d ranks and -p %d disagree: give one of them, or make them agree",
				p.Ranks, tf.threads, tf.gpus, p.Backend, per, p.Ranks)
		}
		p.Ranks = per
	case caps.Rendezvous:
		p.PerProcess = per
		procs := 1 // without -p or a launcher, one process of -t x -g ranks
		if fs.Changed("ranks") {
			procs = p.Ranks
		}
		if procs*per > maxPerProcess {
			return fmt.Errorf("-p %d -t %d -g %d: %d processes of %d ranks, more than %d ranks", procs, tf.threads, tf.gpus, procs, per, maxPerProcess)
		}
		p.Ranks = procs * per
	case per > 1:
		return fmt.Errorf("-t %d -g %d: --backend %s runs one rank per process, so it cannot host %d", tf.threads, tf.gpus, p.Backend, per)
	}
	return nil
}
