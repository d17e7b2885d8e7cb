package tcp

import (
	"fmt"
	"net"
	"strconv"

	"github.com/hccl-test/hccl-test/backends"
)

// CheckConfig implements backends.ConfigChecker: the rendezvous address
// must be host:port with a port number, --bind an address of this machine
// or one of its network interfaces, and HCCL_TEST_SPIN a duration from 0
// to maxSpin, so that no such mistake surfaces only once ranks start (or,
// for HCCL_TEST_SPIN, never).
func (Backend) CheckConfig(cfg backends.Config) error {
	if _, err := spinFromEnv(); err != nil {
		return err
	}
	if cfg.Master != "" {
		if err := checkAddress(cfg.Master); err != nil {
			return fmt.Errorf("--master %q: %w", cfg.Master, err)
		}
	}
	if cfg.Bind == "" {
		return nil
	}
	host, err := bindHost(cfg.Bind)
	if err != nil {
		return err
	}
	// Listening, for a moment, is the one exact test of an address that
	// ranks will listen on.
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return fmt.Errorf("--bind %q: not an address of this machine: %w", cfg.Bind, err)
	}
	return ln.Close()
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
