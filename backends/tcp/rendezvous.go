package tcp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// maxTable bounds the rendezvous table a rank accepts: 4096 ranks of
// addresses of at most 256 bytes.
const maxTable = 4096 * 258

// setup creates this rank's endpoint: it listens, meets the other ranks at
// rank 0 (which learns every rank's listener address and sends the table
// back), and starts admitting links. started is called on rank 0 once its
// listener is up, with the address the other ranks must dial.
func setup(ctx context.Context, role role, cfg backends.Config, started func(master string) error) (*endpoint, error) {
	o, err := options(cfg)
	if err != nil {
		return nil, err
	}
	ep := newEndpoint(role.Rank, role.Size, role.Secret, cfg, o.ConnectTimeout)
	ep.agree = agreement(role.Backend)
	deadline := time.Now().Add(ep.connectTimeout)
	listenAddr, err := listenAddress(role, o.Bind)
	if err != nil {
		return nil, err
	}
	ep.ln, err = net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, fmt.Errorf("rank %d: listening on %s: %w", role.Rank, listenAddr, err)
	}
	if role.Rank == 0 {
		ep.rendezvous = make(chan rendezvousConn, role.Size)
	}
	ep.wg.Add(1)
	go ep.acceptLoop()
	fail := func(err error) (*endpoint, error) {
		ep.Close()
		return nil, err
	}
	// With retry, the rendezvous connections stay open as the control
	// connections (see control).
	keep := cfg.Retry && role.Size > 1
	if role.Rank == 0 {
		if started != nil {
			if err := started(ep.ln.Addr().String()); err != nil {
				return fail(err)
			}
		}
		conns, err := ep.collect(ctx, deadline, keep)
		if err != nil {
			return fail(err)
		}
		if keep {
			ep.startControl(conns)
		}
		return ep, nil
	}
	conn, err := ep.join(ctx, role.Master, deadline, keep)
	if err != nil {
		return fail(err)
	}
	if keep {
		ep.startControl([]net.Conn{conn})
	}
	return ep, nil
}

// listenAddress is where this rank listens: rank 0 at the master address
// (its host replaced by --bind if given), the others on the bind address or
// loopback, on a port the system picks.
func listenAddress(role role, bind string) (string, error) {
	host := "127.0.0.1"
	if bind != "" {
		h, err := bindHost(bind)
		if err != nil {
			return "", err
		}
		host = h
	}
	if role.Rank != 0 {
		return net.JoinHostPort(host, "0"), nil
	}
	mh, port, err := net.SplitHostPort(role.Master)
	if err != nil {
		return "", fmt.Errorf("master address %q: %w", role.Master, err)
	}
	if bind == "" && mh != "" {
		host = mh
	}
	return net.JoinHostPort(host, port), nil
}

// bindHost turns --bind (an address, or a network interface name) into a
// host to listen on.
func bindHost(bind string) (string, error) {
	if ip := net.ParseIP(bind); ip != nil {
		return bind, nil
	}
	ifi, err := net.InterfaceByName(bind)
	if err != nil {
		return "", fmt.Errorf("--bind %q is neither an IP address nor a network interface: %w", bind, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return "", fmt.Errorf("--bind %q: %w", bind, err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("--bind %q: the interface has no usable address", bind)
}

// collect is rank 0's side of the rendezvous: it waits for every other
// rank, then sends each the table of listener addresses. With keep, it
// returns the connections, by rank, open; otherwise it closes them.
func (ep *endpoint) collect(ctx context.Context, deadline time.Time, keep bool) (kept []net.Conn, err error) {
	defer func() {
		ep.rdvMu.Lock()
		ep.rendezvous = nil
		ep.rdvMu.Unlock()
	}()
	ep.addrs = make([]string, ep.size)
	ep.addrs[0] = ep.ln.Addr().String()
	conns := make([]net.Conn, ep.size)
	defer func() {
		if keep && err == nil {
			return
		}
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for joined := 1; joined < ep.size; {
		select {
		case rc := <-ep.rendezvous:
			if rc.err != nil {
				abortJoined(conns, rc.err, deadline)
				return nil, fmt.Errorf("rendezvous at %s: %w", ep.addrs[0], rc.err)
			}
			r := rc.hello.Rank
			if r <= 0 || r >= ep.size || conns[r] != nil {
				ep.logf("dropped rendezvous from %s claiming rank %d", rc.conn.RemoteAddr(), r)
				rc.conn.Close()
				continue
			}
			conns[r], ep.addrs[r] = rc.conn, advertised(rc.hello.Addr, rc.conn)
			joined++
		case <-timer.C:
			return nil, fmt.Errorf("rendezvous at %s: %w: %s never joined within %v",
				ep.addrs[0], backends.ErrTimeout, missing(conns), ep.connectTimeout)
		case <-ctx.Done():
			return nil, fmt.Errorf("rendezvous at %s: %w", ep.addrs[0], backends.ContextError(ctx))
		}
	}
	table := encodeTable(ep.addrs)
	for r := 1; r < ep.size; r++ {
		if err := writeFrame(conns[r], KindTable, table, deadline); err != nil {
			return nil, fmt.Errorf("rendezvous: sending the address table to rank %d: %w", r, err)
		}
	}
	return conns, nil
}

// abortJoined tells the ranks that joined, in conns, why rank 0 ends the
// rendezvous (a disagreement, err), in an abort frame where they wait for
// the table, so that they refuse the run as rank 0 does rather than find
// it gone. What it cannot send by deadline is left untold.
func abortJoined(conns []net.Conn, err error, deadline time.Time) {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, backends.ErrDisagree.Error()+": "); ok {
		msg = after
	}
	msg = msg[:min(len(msg), maxAbort)]
	var hdr [HeaderSize]byte
	Header{Kind: KindAbort, Op: AbortDisagree, Len: uint64(len(msg))}.Put(hdr[:])
	frame := append(hdr[:], msg...)
	for _, c := range conns {
		if c != nil {
			c.SetWriteDeadline(deadline)
			_, _ = c.Write(frame)
		}
	}
}

// missing names the ranks that have not joined: "rank 3", "ranks 3, 5" or
// "ranks 3-4095".
func missing(conns []net.Conn) string {
	var out []int
	for r := 1; r < len(conns); r++ {
		if conns[r] == nil {
			out = append(out, r)
		}
	}
	return backends.RankList(out)
}

// advertised is the address peers should dial for a rank that listens on
// addr: if it listens on every interface, the address it reached rank 0
// from.
func advertised(addr string, conn net.Conn) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if la, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
			return net.JoinHostPort(la.IP.String(), port)
		}
	}
	return addr
}

// join is the side of every other rank: it reaches rank 0 (retrying while
// rank 0 starts), says where it listens, and receives the table. With
// keep, it returns the connection to rank 0 open, its deadlines cleared;
// otherwise it closes it.
func (ep *endpoint) join(ctx context.Context, master string, deadline time.Time, keep bool) (kept net.Conn, err error) {
	conn, err := dialRetry(master, deadline, ctx.Done())
	if err != nil {
		return nil, fmt.Errorf("rendezvous: reaching rank 0 at %s: %w", master, err)
	}
	defer func() {
		if kept == nil {
			conn.Close()
		}
	}()
	me := Hello{Rank: ep.rank, Size: ep.size, Purpose: PurposeRendezvous, Addr: ep.ln.Addr().String()}
	if _, err := ep.handshake(conn, me, deadline); err != nil {
		return nil, fmt.Errorf("rendezvous with rank 0 at %s: %w", master, err)
	}
	addrs, err := readTable(conn, master, ep.size, deadline)
	if err != nil {
		return nil, err
	}
	ep.addrs = addrs
	if !keep {
		return nil, nil
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("rendezvous: keeping the connection to rank 0 at %s: %w", master, err)
	}
	return conn, nil
}

// readTable reads, on a rank's rendezvous connection to rank 0 at master,
// the address table of a world of size ranks that rank 0 sends once every
// rank joined, or the abort frame it sends instead when a rank was started
// otherwise (backends.ErrDisagree), before deadline.
func readTable(conn net.Conn, master string, size int, deadline time.Time) ([]string, error) {
	conn.SetDeadline(deadline)
	var hdr [HeaderSize]byte
	h, err := ReadHeader(conn, &hdr)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("rendezvous: %w: rank 0 at %s ended the rendezvous before sending the address table", backends.ErrPeerGone, master)
	}
	if err != nil {
		return nil, fmt.Errorf("rendezvous: waiting for the address table from rank 0 at %s: %w", master, err)
	}
	if h.Kind == KindAbort && h.Op == AbortDisagree && h.Len <= maxAbort {
		msg := make([]byte, h.Len)
		if err := ReadPayload(conn, msg); err != nil {
			return nil, fmt.Errorf("rendezvous: rank 0's reason to end it: %w", err)
		}
		return nil, fmt.Errorf("rendezvous: %w: rank 0 says %s", backends.ErrDisagree, msg)
	}
	if h.Kind != KindTable || h.Len > maxTable {
		return nil, fmt.Errorf("rendezvous: %w: %v frame of %d bytes where the address table was due", ErrBadFrame, h.Kind, h.Len)
	}
	buf := make([]byte, h.Len)
	if err := ReadPayload(conn, buf); err != nil {
		return nil, fmt.Errorf("rendezvous: address table: %w", err)
	}
	addrs, err := decodeTable(buf)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: address table: %w", err)
	}
	if len(addrs) != size {
		return nil, fmt.Errorf("rendezvous: %w: table of %d ranks for a world of %d", backends.ErrMismatch, len(addrs), size)
	}
	return addrs, nil
}

// writeFrame writes one frame with payload before deadline.
func writeFrame(conn net.Conn, kind Kind, payload []byte, deadline time.Time) error {
	conn.SetWriteDeadline(deadline)
	defer conn.SetWriteDeadline(time.Time{})
	var hdr [HeaderSize]byte
	Header{Kind: kind, Len: uint64(len(payload))}.Put(hdr[:])
	bufs := net.Buffers{hdr[:], payload}
	_, err := bufs.WriteTo(conn)
	return err
}

// encodeTable lays out addresses as a count and length-prefixed strings.
func encodeTable(addrs []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(addrs)))
	for _, a := range addrs {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(a)))
		b = append(b, a...)
	}
	return b
}

// decodeTable reads what encodeTable wrote, rejecting anything malformed.
func decodeTable(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: table of %d bytes", ErrBadFrame, len(b))
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n < 1 || n > 4096 {
		return nil, fmt.Errorf("%w: table of %d ranks", ErrBadFrame, n)
	}
	addrs := make([]string, 0, n)
	for range n {
		if len(b) < 2 {
			return nil, fmt.Errorf("%w: table cut short", ErrBadFrame)
		}
		l := int(binary.LittleEndian.Uint16(b))
		if len(b) < 2+l || l > 256 {
			return nil, fmt.Errorf("%w: table entry of %d bytes", ErrBadFrame, l)
		}
		addrs = append(addrs, string(b[2:2+l]))
		b = b[2+l:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d stray bytes after the table", ErrBadFrame, len(b))
	}
	return slices.Clip(addrs), nil
}
