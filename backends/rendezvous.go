package backends

import "context"

// Rendezvous is implemented by transports whose world's ranks all run in
// this process and share its memory (sim): the harness's own control
// calls (runctl.Ctl's barrier, gathering, broadcasting and combining of a
// few figures) meet every rank's values in memory there, with no message,
// rather than as collectives of messages, which on a simulated world of
// thousands of ranks cost more than the measured ops (a recursive
// doubling of n log2 n messages per barrier) and would take virtual time.
type Rendezvous interface {
	// Meet contributes v, this rank's values for the world's next
	// control call, and blocks until every rank of the world has
	// contributed to the same call; then the rank that joined last runs
	// combine once over every rank's values (indexed by rank; combine
	// must not keep them), and every rank gets its result, the same
	// slice, which none may modify. It fails when ctx ends first,
	// naming the ranks that had not joined, and from then on every call
	// of every rank fails with that error; or when a rank left the world
	// (closed its transport) without joining.
	Meet(ctx context.Context, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error)
}

// RendezvousOf returns t's rendezvous: t if it implements Rendezvous,
// else the transport it wraps, and so on; false when there is none. A
// group's transport wraps the world's, whose rendezvous spans the world:
// only a caller that runs on the whole world may use what it returns.
func RendezvousOf(t Transport) (Rendezvous, bool) { return find[Rendezvous](t) }
