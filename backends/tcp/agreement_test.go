package tcp

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// TestHandshakeDisagree: two ranks that prove the secret but say different
// agreements both refuse the connection, naming the setting and both
// values; the same agreement connects.
func TestHandshakeDisagree(t *testing.T) {
	hsNoLeaks(t)
	tests := []struct {
		name         string
		agreeA       string // rank 0's
		agreeB       string // rank 1's
		wantA, wantB string // in each side's error; "" for success
	}{
		{"same", agreement(""), agreement("tcp"), "", ""},
		{"same proc", agreement("proc"), agreement("proc"), "", ""},
		{"tcp and proc", agreement("tcp"), agreement("proc"),
			"rank 1 runs --backend proc where rank 0 runs --backend tcp",
			"rank 0 runs --backend tcp where rank 1 runs --backend proc"},
		{"second setting", "--backend proc\n--x 1", "--backend proc\n--x 2",
			"rank 1 runs --x 2 where rank 0 runs --x 1", "rank 0 runs --x 1 where rank 1 runs --x 2"},
		{"one says more", "--backend proc", "--backend proc\n--x 2",
			"rank 1 runs --x 2 where rank 0 runs nothing", "rank 0 runs nothing where rank 1 runs --x 2"},
		{"control character", "--backend tcp", "--backend \x1b[2J",
			`rank 1 runs "--backend \x1b[2J" where rank 0 runs --backend tcp`, ""},
		{"empty", "", "--backend tcp", "rank 1 runs --backend tcp where rank 0 runs nothing", ""},
	}
	for _, tr := range hsTransports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				a, b := tr.pair(t)
				ra, rb := hsBoth(a, b, hsSecret, hsSecret,
					Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Agree: tt.agreeA},
					Hello{Rank: 1, Size: 2, Purpose: PurposeLink, Agree: tt.agreeB})
				for _, side := range []struct {
					err  error
					want string
				}{{ra.err, tt.wantA}, {rb.err, tt.wantB}} {
					switch {
					case tt.agreeA == tt.agreeB:
						if side.err != nil {
							t.Fatalf("err = %v, want none", side.err)
						}
					case !errors.Is(side.err, backends.ErrDisagree):
						t.Fatalf("err = %v, want one wrapping ErrDisagree", side.err)
					case side.want != "" && !strings.HasSuffix(side.err.Error(), side.want):
						t.Fatalf("err = %q, want it to end %q", side.err, side.want)
					}
				}
			})
		}
	}
}

// TestSetupDisagree: a world in which a rank runs another backend than
// rank 0 ends, on every rank that met rank 0, with ErrDisagree, long
// before the connect timeout: rank 0 does not drop the connection and wait
// for a rank that will not come, and the ranks that joined first hear why
// from rank 0 rather than find it gone. Ranks join in rank order.
func TestSetupDisagree(t *testing.T) {
	tests := []struct {
		name     string
		backends []string // each rank's; "" is tcp
		want     []string // each rank's error ends so
	}{
		{"tcp, proc", []string{"", "proc"}, []string{
			"rank 1 runs --backend proc where rank 0 runs --backend tcp",
			"rank 0 runs --backend tcp where rank 1 runs --backend proc"}},
		{"proc, tcp", []string{"proc", "tcp"}, []string{
			"rank 1 runs --backend tcp where rank 0 runs --backend proc",
			"rank 0 runs --backend proc where rank 1 runs --backend tcp"}},
		{"proc, proc, tcp", []string{"proc", "proc", ""}, []string{
			"rank 2 runs --backend tcp where rank 0 runs --backend proc",
			"rank 0 says rank 2 runs --backend tcp where rank 0 runs --backend proc",
			"rank 0 runs --backend proc where rank 2 runs --backend tcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.backends)
			// Far longer than the test may take: a rank that waited for it
			// is cut short below and fails the test with its context's
			// error.
			cfg := backends.Config{Ranks: n, Options: Options{ConnectTimeout: 10 * time.Minute}}
			secret := newSecret()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			eps := make([]*endpoint, n)
			errs := make([]error, n)
			master := make(chan string, 1)
			var wg sync.WaitGroup
			wg.Go(func() {
				eps[0], errs[0] = setup(ctx, role{Rank: 0, Size: n, Master: "127.0.0.1:0", Secret: secret, Backend: tt.backends[0]}, cfg,
					func(m string) error { master <- m; return nil })
				close(master)
			})
			m, ok := <-master
			if !ok {
				wg.Wait()
				t.Fatalf("rank 0: %v", errs[0])
			}
			// The middle ranks join by hand, so that each is known to have
			// met rank 0 before the last rank comes; they then wait for
			// the table as join does.
			for r := 1; r < n-1; r++ {
				conn, err := net.Dial("tcp", m)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				me := Hello{Rank: r, Size: n, Purpose: PurposeRendezvous, Addr: "127.0.0.1:1", Agree: agreement(tt.backends[r])}
				if _, err := Handshake(conn, secret, me, time.Now().Add(time.Minute)); err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				wg.Go(func() { _, errs[r] = readTable(conn, m, n, time.Now().Add(10*time.Minute)) })
			}
			last := n - 1
			eps[last], errs[last] = setup(ctx, role{Rank: last, Size: n, Master: m, Secret: secret, Backend: tt.backends[last]}, cfg, nil)
			// Rank 0 learns of it in the same handshake: one still waiting
			// long after the last rank gave up is cut short.
			stop := time.AfterFunc(30*time.Second, cancel)
			defer stop.Stop()
			wg.Wait()
			for r, err := range errs {
				if eps[r] != nil {
					eps[r].Close()
				}
				if !errors.Is(err, backends.ErrDisagree) || errors.Is(err, backends.ErrTimeout) || !strings.HasSuffix(err.Error(), tt.want[r]) {
					t.Errorf("rank %d: err = %v, want ErrDisagree ending %q", r, err, tt.want[r])
				}
			}
		})
	}
}
