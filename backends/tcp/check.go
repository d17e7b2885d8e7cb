package tcp

import (
	"fmt"
	"net"
	"strconv"

	"github.com/hccl-test/hccl-test/backends"
)

// CheckConfig implements backends.ConfigChecker: the options must be
// tcp's, the rendezvous address host:port with a port number, --bind an address of this machine
// or one of its network interfaces, and HCCL_TEST_SPIN a duration from 0
// to maxSpin, so that no such mistake surfaces only once ranks start (or,
// for HCCL_TEST_SPIN, never).
func (Backend) CheckConfig(cfg backends.Config) error {
	if _, err := spinFromEnv(); err != nil {
		return err
	}
	o, err := options(cfg)
	if err != nil {
		return err
	}
	if o.Master != "" {
		if err := checkAddress(o.Master); err != nil {
			return fmt.Errorf("--master %q: %w", o.Master, err)
		}
	}
	r, launched, err := detectLaunch(getenv, o.Master, o.Bind)
	if err != nil {
		return err
	}
	if !launched { // this process is rank 0 and starts the others
		r = role{Rank: 0, Master: o.Master}
	}
	if r.Master == "" { // rank 0 picks its port: started by hccl-test, or meeting in a file
		r.Master = "127.0.0.1:0"
	}
	addr, err := listenAddress(r, o.Bind)
	if err != nil {
		return err
	}
	// Listening, for a moment, is the one exact test of an address that
	// this rank will listen on; on port 0, as the port itself may be free
	// or taken by the time the rank starts.
	host, _, _ := net.SplitHostPort(addr)
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	switch {
	case err == nil:
		return ln.Close()
	case o.Bind != "":
		return fmt.Errorf("--bind %q: not an address of this machine: %w", o.Bind, err)
	default:
		from := "rendezvous address"
		if !launched {
			from = "--master"
		}
		return fmt.Errorf("%s %q: rank 0 listens there, but %q is not an address of this machine: %w", from, r.Master, host, err)
	}
}

// checkAddress checks a rendezvous address: host:port, the port a number
// from 0 to 65535 (0 only where hccl-test starts the ranks itself and picks
// one).
func checkAddress(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("want host:port, rank 0's rendezvous address")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q: want a number from 0 to 65535", port)
	}
	return nil
}
