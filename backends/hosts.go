package backends

// HostReporter is implemented by transports whose ranks may sit on
// different machines: Hosts returns the host of every rank, in rank order
// (the same on every rank), so that ranks on one host can be told to share
// a server (--topology auto). Transports whose ranks all live in one
// process do not implement it.
type HostReporter interface {
	Hosts() []string
}

// HostsOf returns the host of every rank of t, or of the transport it
// wraps, and so on; false when none of them reports hosts.
func HostsOf(t Transport) ([]string, bool) {
	hr, ok := find[HostReporter](t)
	if !ok {
		return nil, false
	}
	return hr.Hosts(), true
}
