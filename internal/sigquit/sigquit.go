// Package sigquit takes SIGQUIT over from the Go runtime as early as a
// program's own code can, so that a SIGQUIT sent while the program starts
// never ends it with Go's default, a dump of every goroutine and exit
// status 2. Import it from package main (for its side effect, or for C).
//
// Packages are initialised in the order of their import paths, each as soon
// as the packages it imports are: this one imports only os/signal, so it
// runs among the first, about a millisecond into the process, before the
// program's larger dependencies and well before main. What is left is the
// runtime's own start, which no package can shorten.
package sigquit

import (
	"os"
	"os/signal"
	"syscall"
)

// ch receives SIGQUIT from the init of this package on.
var ch = make(chan os.Signal, 1)

func init() { signal.Notify(ch, syscall.SIGQUIT) }

// C returns the channel on which SIGQUIT arrives. It holds one pending
// signal; more sent before it is read are dropped.
func C() <-chan os.Signal { return ch }
