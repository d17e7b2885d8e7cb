package tcp

import "net"

// Hosts implements backends.HostReporter: the host part of every rank's
// listener address, as the rendezvous table gave it to every rank.
func (ep *endpoint) Hosts() []string {
	out := make([]string, len(ep.addrs))
	for i, a := range ep.addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			host = a
		}
		out[i] = host
	}
	return out
}
