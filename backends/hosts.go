package backends

// HostReporter is implemented by transports whose ranks may sit on
// different machines: Hosts returns the host of every rank, in rank order
// (the same on every rank), so that ranks on one host can be told to share
// a server (--topology auto). Transports whose ranks all live in one
// process do not implement it.
type HostReporter interface {
	Hosts() []string
}
