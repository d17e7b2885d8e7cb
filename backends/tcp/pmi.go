package tcp

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// pmi is a client of the PMI-1 wire protocol that MPICH's Hydra (mpiexec)
// speaks to each process over the descriptor in PMI_FD: a key-value space
// per job that only the job's processes reach, and a barrier. Rank 0 puts
// its address and the secret there; every rank passes the barrier, and the
// others get them. It works across hosts: Hydra carries the values.
type pmi struct {
	conn net.Conn
	r    *bufio.Reader
	kvs  string // the job's key-value space
	rank int
	ctx  context.Context // the wait in progress, nil outside one
}

// pmiKey is the key rank 0's address and secret are put under.
const pmiKey = "hccl-test-rendezvous"

// dialPMI opens the PMI connection of descriptor fd (PMI_FD, which package
// launcher checked is a socket).
func dialPMI(fd int, rank int) (*pmi, error) {
	f := os.NewFile(uintptr(fd), "PMI_FD")
	conn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("PMI_FD=%d: %w", fd, err)
	}
	return &pmi{conn: conn, r: bufio.NewReader(conn), rank: rank}, nil
}

// do sends one command and reads the reply, which must be cmd=want and,
// where it has an rc, rc=0.
func (p *pmi) do(deadline time.Time, line, want string) (map[string]string, error) {
	p.conn.SetDeadline(deadline)
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		return nil, p.fail(line, err)
	}
	reply, err := p.r.ReadString('\n')
	if err != nil {
		return nil, p.fail(line, err)
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(reply) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	if f["cmd"] != want || (f["rc"] != "" && f["rc"] != "0") {
		return nil, fmt.Errorf("PMI: %q answered %q", cmdName(line), strings.TrimSpace(reply))
	}
	return f, nil
}

// watch ends a wait on the connection when ctx ends; the returned func
// stops watching.
func (p *pmi) watch(ctx context.Context) func() {
	p.ctx = ctx
	stop := context.AfterFunc(ctx, func() { p.conn.SetDeadline(time.Unix(1, 0)) })
	return func() { stop(); p.ctx = nil }
}

// fail describes a PMI exchange that did not complete.
func (p *pmi) fail(line string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) && p.ctx != nil && p.ctx.Err() != nil {
		return fmt.Errorf("PMI %s: %w", cmdName(line), backends.ContextError(p.ctx))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		what := cmdName(line)
		if what == "barrier_in" {
			what = "every rank to reach the PMI barrier (a rank that never started, or failed before its rendezvous)"
		}
		return fmt.Errorf("PMI: %w: waited for %s (--connect-timeout)", backends.ErrTimeout, what)
	}
	return fmt.Errorf("PMI %s: %w", cmdName(line), err)
}

// cmdName is the command of a PMI line, "cmd=get ..." -> "get".
func cmdName(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return line
	}
	return strings.TrimPrefix(f[0], "cmd=")
}

// start initialises PMI and learns the job's key-value space.
func (p *pmi) start(deadline time.Time) error {
	if _, err := p.do(deadline, "cmd=init pmi_version=1 pmi_subversion=1", "response_to_init"); err != nil {
		return err
	}
	f, err := p.do(deadline, "cmd=get_my_kvsname", "my_kvsname")
	if err != nil {
		return err
	}
	if p.kvs = f["kvsname"]; p.kvs == "" {
		return errors.New("PMI: no key-value space name")
	}
	return nil
}

// publish is rank 0's side: put (the address, a comma, the secret in hex),
// then the barrier.
func (p *pmi) publish(ctx context.Context, addr string, secret []byte, deadline time.Time) error {
	defer p.watch(ctx)()
	if err := p.start(deadline); err != nil {
		return err
	}
	put := fmt.Sprintf("cmd=put kvsname=%s key=%s value=%s,%s", p.kvs, pmiKey, addr, hex.EncodeToString(secret))
	if _, err := p.do(deadline, put, "put_result"); err != nil {
		return err
	}
	_, err := p.do(deadline, "cmd=barrier_in", "barrier_out")
	return err
}

// await is every other rank's side: the barrier, then get.
func (p *pmi) await(ctx context.Context, deadline time.Time) (string, []byte, error) {
	defer p.watch(ctx)()
	if err := p.start(deadline); err != nil {
		return "", nil, err
	}
	if _, err := p.do(deadline, "cmd=barrier_in", "barrier_out"); err != nil {
		return "", nil, err
	}
	f, err := p.do(deadline, fmt.Sprintf("cmd=get kvsname=%s key=%s", p.kvs, pmiKey), "get_result")
	if err != nil {
		return "", nil, err
	}
	addr, hexSecret, _ := strings.Cut(f["value"], ",")
	secret, err := hex.DecodeString(hexSecret)
	if err != nil || len(secret) == 0 || checkAddress(addr) != nil {
		return "", nil, fmt.Errorf("PMI: rank 0's rendezvous value %q is not an address and a secret", f["value"])
	}
	return addr, secret, nil
}

// close says goodbye to the process manager and closes the connection.
func (p *pmi) close() {
	if p.kvs != "" {
		_, _ = p.do(time.Now().Add(5*time.Second), "cmd=finalize", "finalize_ack")
	}
	p.conn.Close()
}
