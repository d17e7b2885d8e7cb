package tcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
)

var testSecret = []byte("test-secret")

// localWorld sets up n endpoints in this process over loopback, the way n
// rank processes would, and closes them when the test ends.
func localWorld(t *testing.T, n int, cfg backends.Config) []*endpoint {
	t.Helper()
	if cfg.Options == nil {
		cfg.Options = Options{ConnectTimeout: 10 * time.Second}
	}
	ts, err := NewLocalWorld(context.Background(), n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]*endpoint, n)
	for r, tr := range ts {
		eps[r] = tr.(*endpoint)
	}
	t.Cleanup(func() {
		for _, ep := range eps {
			ep.Close()
		}
	})
	return eps
}

func transports(eps []*endpoint) []backends.Transport {
	ts := make([]backends.Transport, len(eps))
	for i, ep := range eps {
		ts[i] = ep
	}
	return ts
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, n int) []backends.Transport {
		return transports(localWorld(t, n, backends.Config{}))
	})
}

// TestMismatchedCalls: a rank in a different call than its peer fails with
// an error that names both calls.
func TestMismatchedCalls(t *testing.T) {
	eps := localWorld(t, 2, backends.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	eps[0].BeginCall(backends.Call{Seq: 17, Op: 2, DType: 11})
	eps[1].BeginCall(backends.Call{Seq: 17, Op: 1, DType: 11})
	s := eps[0].Send(1, make([]byte, 8))
	err := eps[1].Recv(0, make([]byte, 8)).Wait(ctx)
	_ = s.Wait(ctx)
	if !errors.Is(err, backends.ErrMismatch) || !strings.Contains(err.Error(), "as op #17") {
		t.Fatalf("got %v, want a mismatch naming op #17", err)
	}
}

// TestPeerGone: a peer that closes fails the other side's pending receive
// at once, naming the peer.
func TestPeerGone(t *testing.T) {
	eps := localWorld(t, 2, backends.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Connect the pair first.
	s := eps[0].Send(1, []byte{1})
	if err := errors.Join(eps[1].Recv(0, make([]byte, 1)).Wait(ctx), s.Wait(ctx)); err != nil {
		t.Fatal(err)
	}
	r := eps[0].Recv(1, make([]byte, 8))
	eps[1].Close()
	start := time.Now()
	err := r.Wait(ctx)
	if !errors.Is(err, backends.ErrPeerGone) || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("got %v, want peer gone naming rank 1", err)
	}
	// At once, not at the deadline: the close ended the wait while the
	// context was live.
	if ctx.Err() != nil {
		t.Fatalf("noticed after %v, with the context's end", time.Since(start))
	}
}

// TestMissingRank: rank 0 names the rank that never joins the rendezvous.
func TestMissingRank(t *testing.T) {
	cfg := backends.Config{Ranks: 3, Options: Options{ConnectTimeout: 300 * time.Millisecond}}
	master := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		ep, err := setup(context.Background(), role{Rank: 0, Size: 3, Master: "127.0.0.1:0", Secret: testSecret}, cfg,
			func(m string) error { master <- m; return nil })
		if ep != nil {
			ep.Close()
		}
		done <- err
	}()
	m := <-master
	ep1, err := setup(context.Background(), role{Rank: 1, Size: 3, Master: m, Secret: testSecret}, cfg, nil)
	if err == nil {
		ep1.Close()
	}
	err = <-done
	if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "rank 2 never joined") {
		t.Fatalf("got %v, want rank 2 named", err)
	}
}

func TestDetectLaunch(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		master string
		want   role
		ok     bool
		errHas string
	}{
		{name: "none", env: map[string]string{}},
		{name: "open mpi", env: map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", EnvSecret: "s"},
			master: "h:1", ok: true, want: role{Rank: 2, Size: 4, Master: "h:1"}},
		{name: "mpich", env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2", EnvSecret: "s"},
			master: "h:1", ok: true, want: role{Rank: 0, Size: 2, Master: "h:1"}},
		{name: "slurm", env: map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_JOB_ID": "8", "SLURM_STEP_ID": "0", EnvSecret: "s"},
			master: "h:1", ok: true, want: role{Rank: 1, Size: 3, Master: "h:1"}},
		{name: "torchrun", env: map[string]string{"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "10.1.1.1", "MASTER_PORT": "29500", EnvSecret: "s"},
			ok: true, want: role{Rank: 1, Size: 2, Master: "10.1.1.1:29500"}},
		{name: "no master", env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2", EnvSecret: "s"}, ok: true, errHas: "--master"},
		{name: "no secret", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"}, ok: true, errHas: EnvSecret},
		{name: "rank out of range", env: map[string]string{"RANK": "2", "WORLD_SIZE": "2"}, errHas: `RANK="2": want a rank of the WORLD_SIZE=2`},
		{name: "bad master", env: map[string]string{"RANK": "0", "WORLD_SIZE": "1", EnvSecret: "s"}, master: "nohost", ok: true, errHas: "host:port"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := detectLaunch(func(k string) string { return tc.env[k] }, tc.master, "")
			if ok != tc.ok {
				t.Fatalf("launched = %v, want %v", ok, tc.ok)
			}
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("got %v, want an error mentioning %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Rank != tc.want.Rank || got.Size != tc.want.Size || got.Master != tc.want.Master {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTableRoundTrip(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "[::1]:2", "10.0.0.3:40000"}
	got, err := decodeTable(encodeTable(addrs))
	if err != nil || strings.Join(got, ",") != strings.Join(addrs, ",") {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, {2, 0, 0, 0, 5, 0, 'a'}, append(encodeTable(addrs), 9)} {
		if _, err := decodeTable(bad); !errors.Is(err, ErrBadFrame) {
			t.Errorf("decodeTable(%v) = %v, want ErrBadFrame", bad, err)
		}
	}
}
