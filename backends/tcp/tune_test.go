package tcp

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSocketBuffers checks the kernel buffers a connection asks for: 4 MiB
// each way when every rank has a CPU, 1 MiB when ranks outnumber CPUs.
func TestSocketBuffers(t *testing.T) {
	over := oversubscribed
	t.Cleanup(func() { oversubscribed = over })
	for _, tc := range []struct {
		oversubscribed bool
		want           int
	}{
		{false, 4 << 20},
		{true, 1 << 20},
	} {
		oversubscribed = tc.oversubscribed
		_, conn := socketPair(t)
		tune(conn)
		for _, o := range []struct {
			name, limit string
			opt         int
		}{
			{"SO_RCVBUF", "rmem_max", unix.SO_RCVBUF},
			{"SO_SNDBUF", "wmem_max", unix.SO_SNDBUF},
		} {
			// Linux grants at most net.core.[rw]mem_max, and doubles
			// what it grants for its bookkeeping.
			want := 2 * min(tc.want, sysctl(t, "/proc/sys/net/core/"+o.limit))
			if got := sockopt(t, conn, o.opt); got != want {
				t.Errorf("oversubscribed %v: %s %d, want %d", tc.oversubscribed, o.name, got, want)
			}
		}
	}
}

// sysctl reads an integer kernel setting.
func sysctl(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// sockopt reads an integer socket option of conn's.
func sockopt(t *testing.T, conn net.Conn, opt int) int {
	t.Helper()
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}
