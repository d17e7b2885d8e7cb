package world

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	_ "github.com/hccl-test/hccl-test/backends/proc" // the backend launched processes run
	"github.com/hccl-test/hccl-test/fielderr"
)

// TestChooseLaunched: the processes a launcher started are one world: with
// no backend named, shm gives way to proc; a named backend that cannot
// join is refused; a launcher's world of one process, hccl-test's own
// ranks and no launcher leave the backend as it is.
func TestChooseLaunched(t *testing.T) {
	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4"}
	tests := []struct {
		name    string
		env     map[string]string
		backend string
		given   bool
		want    string // the backend after, or
		errHas  string // the refusal
	}{
		{"no launcher", nil, "shm", false, "shm", ""},
		{"open mpi, no backend named", ompi, "shm", false, "proc", ""},
		{"open mpi, tcp named", ompi, "tcp", true, "tcp", ""},
		{"open mpi, shm named", ompi, "shm", true, "", "--backend shm: this process was started by mpirun (Open MPI)"},
		{"open mpi, sim named", ompi, "sim", true, "", "--backend sim: this process was started"},
		{"open mpi of one process", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}, "shm", false, "shm", ""},
		{"hccl-test's own rank", map[string]string{"HCCL_TEST_RANK": "1", "HCCL_TEST_WORLD_SIZE": "4"}, "shm", false, "shm", ""},
		{"torchrun, no backend named", map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, "shm", false, "proc", ""},
		{"a half-set launcher", map[string]string{"OMPI_COMM_WORLD_RANK": "1"}, "shm", false, "", `OMPI_COMM_WORLD_RANK="1": set without`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := World{Backend: tc.backend}
			err := w.ChooseLaunched(tc.given, func(k string) string { return tc.env[k] })
			if tc.errHas != "" {
				msg := ""
				if fe, ok := err.(*fielderr.FieldError); ok {
					msg = fe.Format(fielderr.Names{Long: func(f fielderr.Field) string { return "--" + strings.ToLower(string(f)) }})
				} else if err != nil {
					msg = err.Error()
				}
				if !strings.Contains(msg, tc.errHas) {
					t.Fatalf("got %v; want an error with %q", msg, tc.errHas)
				}
				return
			}
			if err != nil || w.Backend != tc.want {
				t.Fatalf("backend %s, %v; want %s", w.Backend, err, tc.want)
			}
		})
	}
}

// TestCheckPerNode: -p under a launcher is the processes of this host,
// as the launcher says; where it does not, no more than its world; under
// hccl-test's own -p, the world.
func TestCheckPerNode(t *testing.T) {
	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "8"}
	own := map[string]string{"HCCL_TEST_RANK": "1", "HCCL_TEST_WORLD_SIZE": "4"}
	local := func(n int) backends.Launch {
		return backends.Launch{Rank: 1, Size: 8, Source: "mpirun (Open MPI)", Local: n, LocalSource: "OMPI_COMM_WORLD_LOCAL_SIZE=4"}
	}
	tests := []struct {
		name   string
		env    map[string]string
		procs  int
		lw     backends.Launch
		errHas string
	}{
		{"the local size", ompi, 4, local(4), ""},
		{"past the local size", ompi, 8, local(4), "Ranks 8: under a launcher -p is the ranks per node"},
		{"short of the local size", ompi, 2, local(4), "started 4 processes on this host (OMPI_COMM_WORLD_LOCAL_SIZE=4): give -p 4"},
		{"local size unknown, within the world", ompi, 8, local(0), ""},
		{"local size unknown, past the world", ompi, 9, local(0), "started 8 processes in all: give at most -p 8"},
		{"hccl-test's own ranks: the world", own, 4, backends.Launch{Rank: 1, Size: 4, Source: "hccl-test"}, ""},
		{"hccl-test's own ranks: not the world", own, 2, backends.Launch{Rank: 1, Size: 4, Source: "hccl-test"}, "Ranks 2: this process was started by hccl-test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPerNode(tc.procs, tc.lw, func(k string) string { return tc.env[k] })
			switch {
			case tc.errHas == "" && err != nil:
				t.Fatal(err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Fatalf("got %v; want an error with %q", err, tc.errHas)
			}
		})
	}
}
