package main

import (
	"fmt"
	"runtime"
	"strconv"
)

// checkGOMAXPROCS refuses a GOMAXPROCS that the Go runtime would ignore
// (not a positive integer) or that asks for more threads of Go code than
// this process has CPUs. The variable is passed on to every rank process
// the tcp backend starts (-p N) and holds for every rank a launcher
// starts, and each runtime sets up state for every one of them before any
// of our code runs: GOMAXPROCS=100000 took 49 s and 2.1 GB per process
// before hccl-test even read its flags. More threads than CPUs never run
// more Go code at once, so no run needs them.
func checkGOMAXPROCS(getenv func(string) string) error {
	v := getenv("GOMAXPROCS")
	if v == "" {
		return nil
	}
	limit := runtime.NumCPU()
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > limit {
		return fmt.Errorf("GOMAXPROCS=%q: want 1 to %d, the CPUs this process may run on (every rank process takes it)", v, limit)
	}
	return nil
}
