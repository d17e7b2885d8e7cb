package main

import (
	"fmt"
	"io"

	"github.com/hccl-test/hccl-test/runctl"
)

// WriteStatus writes one line per rank this process hosts saying what it
// is doing now (which op, and for how long it has waited on which peers),
// without disturbing the run: the report on SIGQUIT.
func WriteStatus(w io.Writer) {
	comms := runctl.Running()
	if len(comms) == 0 {
		fmt.Fprintln(w, "hccl-test: no rank is running")
	}
	for _, c := range comms {
		fmt.Fprintf(w, "hccl-test: %s\n", c.Status())
	}
}
