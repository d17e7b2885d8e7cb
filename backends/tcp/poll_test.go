package tcp

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hccl-test/hccl-test/backends"
)

// TestAdaptiveSpin checks whether a reader polls after a history of polls
// that ended with data early (won with most of the time left), late (won
// with little left) or not at all (lost), and that a reader that has
// stopped probes now and then.
func TestAdaptiveSpin(t *testing.T) {
	budget := spinBudget
	if budget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0)")
	}
	early := func(p *pollReader) { p.won(budget, budget) }
	late := func(p *pollReader) { p.won(budget/4, budget) }
	lost := (*pollReader).polled
	tests := []struct {
		name    string
		history []func(*pollReader)
		polls   bool
	}{
		{"fresh", nil, true},
		{"early wins", []func(*pollReader){early, early, early}, true},
		{"one poll lost of many", []func(*pollReader){early, lost, early, early, lost}, true},
		{"two in a row lost", []func(*pollReader){lost, lost}, false},
		{"late wins count as lost", []func(*pollReader){late, late}, false},
		{"lost half the time", []func(*pollReader){early, lost, early, lost, early, lost, early, lost}, false},
		{"a probe that wins resumes", []func(*pollReader){lost, lost, early}, true},
		{"a probe that wins late does not", []func(*pollReader){lost, lost, late}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pollReader{credit: maxCredit}
			for _, f := range tc.history {
				f(p)
			}
			if got := p.spinFor() > 0; got != tc.polls {
				t.Fatalf("polls: %v, want %v (credit %d)", got, tc.polls, p.credit)
			}
		})
	}
	// Stopped, it probes, for the whole budget, once every probeEvery waits.
	p := &pollReader{}
	probes := 0
	for range 10 * probeEvery {
		switch d := p.spinFor(); d {
		case 0:
		case budget:
			probes++
		default:
			t.Fatalf("a probe polls for %v, want %v", d, budget)
		}
	}
	if probes != 10 {
		t.Fatalf("%d probes in %d waits, want 10", probes, 10*probeEvery)
	}
}

// TestYieldPoll checks a reader on an oversubscribed host with a receive
// posted: it polls, giving its CPU away between reads, for yieldBudget and
// then parks in the network poller, which still wakes it for data that
// comes later.
func TestYieldPoll(t *testing.T) {
	if spinBudget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0)")
	}
	over := oversubscribed
	oversubscribed = true
	t.Cleanup(func() { oversubscribed = over })

	in, out := socketPair(t)
	var looks atomic.Int64
	state := func() (bool, bool, bool) { looks.Add(1); return true, false, false }
	r := newPollReader(in, state, func() bool { return false })
	got := readFive(r)

	time.Sleep(yieldBudget + 50*time.Millisecond)
	polled := looks.Load()
	time.Sleep(50 * time.Millisecond)
	if n := looks.Load(); polled < 2 || n != polled {
		t.Errorf("with a receive posted the reader looked %d times in its budget, %d by 50ms later; want it to poll, then park", polled, n)
	}
	if _, err := out.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "hello" {
			t.Fatalf("read %q, want hello", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the data written after the reader parked never woke it")
	}
}

// TestIdleBeforeRead checks that a link's reader between messages, with
// no receive posted, waits for one before it reads the socket at all (a
// read that would mostly find it empty, a system call a message), and
// then takes what came meanwhile.
func TestIdleBeforeRead(t *testing.T) {
	if spinBudget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0)")
	}
	over := oversubscribed
	t.Cleanup(func() { oversubscribed = over })
	for _, o := range []bool{false, true} {
		oversubscribed = o
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		eps := localWorld(t, 2, backends.Config{})
		hello := eps[1].Recv(0, make([]byte, 1)) // rank 0 dials once it sends
		if err := errors.Join(eps[0].Send(1, []byte{1}).Wait(ctx), hello.Wait(ctx)); err != nil {
			t.Fatal(err)
		}
		if err := eps[1].Send(0, []byte("hello")).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := eps[0].linkTo(1)
		if err != nil {
			t.Fatal(err)
		}
		waitUnread(t, l, HeaderSize+5)
		time.Sleep(50 * time.Millisecond)
		if n := unread(t, l.conn); n != HeaderSize+5 {
			t.Errorf("oversubscribed=%v: with no receive posted the reader left %d of %d bytes in the socket, want all", o, n, HeaderSize+5)
		}
		b := make([]byte, 5)
		if err := eps[0].Recv(1, b).Wait(ctx); err != nil || string(b) != "hello" {
			t.Errorf("oversubscribed=%v: a receive posted got %q, %v; want hello", o, b, err)
		}
	}
}

// readFive reads five bytes from r in a goroutine of its own and sends
// them, or the error's text, on the channel it returns.
func readFive(r io.Reader) <-chan string {
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 5)
		if _, err := io.ReadFull(r, b); err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	return got
}

// unread returns the bytes waiting in conn's receive queue (SIOCINQ).
func unread(t *testing.T, conn net.Conn) int {
	t.Helper()
	rc, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}
