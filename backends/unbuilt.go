package backends

// unbuilt names the backends that exist but only in a build with a tag,
// and says how to get one: Lookup's error for such a name says so rather
// than "unknown backend".
var unbuilt = map[string]string{
	"mpi": "needs a build with -tags mpi (cgo and Open MPI's headers: go build -tags mpi ./cmd/hccl-test), run under mpirun; see docs/mpi.md",
}
