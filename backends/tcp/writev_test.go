package tcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// TestWritevAll sends header and payload over loopback with a small send
// buffer and a slow reader, so that writes come back partial, split inside
// the header or the payload, and wait for room: the stream must arrive
// whole and in order.
func TestWritevAll(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hdr, size  int
		readChunk  int
		readPauses bool
	}{
		{"empty header", 0, 1 << 20, 64 << 10, false},
		{"header only", HeaderSize, 0, 7, false},
		{"small", HeaderSize, 100, 3, false},
		{"larger than the socket buffers", HeaderSize, 8 << 20, 1 << 20, true},
		{"odd sizes", 5, 3<<20 + 7, 4093, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, conn := socketPair(t)
			got := make(chan []byte, 1)
			// The reader ends when the writer closes its side (or the
			// test's cleanup closes both): no deadline of its own, which a
			// loaded host overran with the stream still flowing (8 MiB
			// read with a pause between reads took over 30 s).
			go func() {
				var all []byte
				buf := make([]byte, tc.readChunk)
				for {
					n, err := c.Read(buf)
					all = append(all, buf[:n]...)
					if err != nil {
						got <- all
						return
					}
					if tc.readPauses {
						time.Sleep(time.Millisecond)
					}
				}
			}()
			_ = conn.(*net.TCPConn).SetWriteBuffer(16 << 10)
			hdr := bytes.Repeat([]byte{0xAB}, tc.hdr)
			payload := make([]byte, tc.size)
			for i := range payload {
				payload[i] = byte(i * 7 / 3)
			}
			if err := writevAll(conn, hdr, payload); err != nil {
				t.Fatalf("writevAll: %v", err)
			}
			conn.Close()
			all := <-got
			want := append(append([]byte{}, hdr...), payload...)
			if !bytes.Equal(all, want) {
				t.Fatalf("received %d bytes, want %d (first difference at %d)", len(all), len(want), firstDiff(all, want))
			}
		})
	}
}

// TestWritevAllClosed reports the error of a write to a closed connection.
func TestWritevAllClosed(t *testing.T) {
	a, b := net.Pipe() // not a system socket: the fallback path
	b.Close()
	if err := writevAll(a, []byte("h"), []byte("p")); err == nil {
		t.Fatal("writevAll to a closed pipe: no error")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := writevAll(conn, []byte("h"), []byte("p")); err == nil {
		t.Fatal("writevAll on a closed connection: no error")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLargeMessages runs messages small and large both ways at once
// between two ranks, with the host taken as oversubscribed (frames above
// smallFrame go out in turns, writeInTurn) and not: every byte must
// arrive, in order, into the right receive.
func TestLargeMessages(t *testing.T) {
	over := oversubscribed
	t.Cleanup(func() { oversubscribed = over })
	for _, o := range []bool{true, false} {
		oversubscribed = o
		t.Run(fmt.Sprintf("oversubscribed=%v", o), largeMessages)
	}
}

func largeMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eps, err := NewLocalWorld(ctx, 2, backends.Config{Options: Options{ConnectTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	// Sizes on both sides of readBuffer and smallFrame, so the reader
	// takes payloads from its buffer, from the socket, and from both.
	sizes := []int{1, smallFrame, smallFrame + 1, readBuffer + 5, inlineMax + 3, 64<<10 + 1, 1 << 20, 9<<20 + 3}
	fill := func(me, i int) []byte {
		b := make([]byte, sizes[i])
		for j := range b {
			b[j] = byte(j*31 + me*7 + i)
		}
		return b
	}
	var wg sync.WaitGroup
	for me := range 2 {
		wg.Go(func() {
			for i := range sizes {
				got := make([]byte, sizes[i])
				s := eps[me].Send(1-me, fill(me, i))
				r := eps[me].Recv(1-me, got)
				if err := errors.Join(r.Wait(ctx), s.Wait(ctx)); err != nil {
					t.Errorf("rank %d, message %d: %v", me, i, err)
					return
				}
				if want := fill(1-me, i); !bytes.Equal(got, want) {
					t.Errorf("rank %d, message %d of %d bytes: first difference at %d", me, i, sizes[i], firstDiff(got, want))
				}
			}
		})
	}
	wg.Wait()
}
