package backends_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/backends/tcp"
)

// TestCapsMatchTransports: what each backend says it is agrees with what
// its transports implement, so that a caller choosing by Caps before a
// world starts chooses as it would by the transports.
func TestCapsMatchTransports(t *testing.T) {
	simWorld, err := sim.NewWorld(2, sim.LinkModel{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tcpWorld, err := tcp.NewLocalWorld(ctx, 2, backends.Config{Options: tcp.Options{ConnectTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range tcpWorld {
			ep.Close()
		}
	}()
	tests := []struct {
		backend string
		t       backends.Transport
	}{
		{shm.Name, shm.NewWorld(2).Endpoint(0)},
		{sim.Name, simWorld.Endpoint(0)},
		{tcp.Name, tcpWorld[0]},
	}
	for _, tc := range tests {
		t.Run(tc.backend, func(t *testing.T) {
			b, err := backends.Lookup(tc.backend)
			if err != nil {
				t.Fatal(err)
			}
			c := b.Capabilities()
			_, recovers := tc.t.(backends.Recoverer)
			_, clock := backends.ClockOf(tc.t)
			_, hosts := backends.HostsOf(tc.t)
			_, native := tc.t.(backends.Native)
			_, modeled := b.(backends.Modeled)
			dr, ok := tc.t.(backends.DirectReader)
			direct := ok && dr.ReadsSenderBuffer()
			for _, f := range []struct {
				name      string
				caps, has bool
			}{
				{"Recovers (Recoverer)", c.Recovers, recovers},
				{"Simulated (Clock)", c.Simulated, clock},
				{"Simulated (the backend's Modeled)", c.Simulated, modeled},
				{"Hosts (HostReporter)", c.Hosts, hosts},
				{"Native (Native)", c.Native, native},
				{"SharedMemory (DirectReader)", c.SharedMemory, direct},
			} {
				if f.caps != f.has {
					t.Errorf("Caps.%s is %v, but the transport's is %v", f.name, f.caps, f.has)
				}
			}
		})
	}
}

// TestNamesWith lists the registered backends by capability.
func TestNamesWith(t *testing.T) {
	tests := []struct {
		name string
		has  func(backends.Caps) bool
		want string
	}{
		{"simulated", func(c backends.Caps) bool { return c.Simulated }, "sim"},
		{"rendezvous", func(c backends.Caps) bool { return c.Rendezvous }, "tcp"},
		{"in process", func(c backends.Caps) bool { return c.InProcess }, "shm sim"},
		{"recovers", func(c backends.Caps) bool { return c.Recovers }, "shm sim tcp"},
	}
	for _, tc := range tests {
		if got := strings.Join(backends.NamesWith(tc.has), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := backends.Lookup("nope"); err == nil || !strings.Contains(err.Error(), `unknown backend "nope"`) {
		t.Errorf("Lookup of an unknown backend: %v", err)
	}
}

// TestOptionsRefused: a backend refuses another backend's options, and
// bad options of its own, before anything starts (CheckConfig) and in Run.
func TestOptionsRefused(t *testing.T) {
	tests := []struct {
		name, backend string
		opts          any
		want          string
	}{
		{"sim's on tcp", tcp.Name, sim.Options{}, "backend tcp: options of type sim.Options, want tcp.Options"},
		{"tcp's on sim", sim.Name, tcp.Options{}, "backend sim: options of type tcp.Options, want sim.Options"},
		{"sim's on shm", shm.Name, sim.Options{}, "backend shm: options of type sim.Options, want none"},
		{"negative connect timeout", tcp.Name, tcp.Options{ConnectTimeout: -1}, "connect timeout must not be negative, got -1ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := backends.Config{Ranks: 2, Options: tc.opts}
			b, err := backends.Lookup(tc.backend)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := b.(backends.ConfigChecker); ok {
				if err := backends.CheckConfig(b, cfg); err == nil || err.Error() != tc.want {
					t.Errorf("CheckConfig: %v, want %q", err, tc.want)
				}
			}
			ran := false
			err = b.Run(context.Background(), cfg, func(context.Context, backends.Transport) error { ran = true; return nil })
			if err == nil || err.Error() != tc.want || ran {
				t.Errorf("Run: %v (ranks ran: %v), want %q before any rank", err, ran, tc.want)
			}
		})
	}
}

// TestSimOptionsChecked: sim's CheckConfig refuses a link model its worlds
// would refuse.
func TestSimOptionsChecked(t *testing.T) {
	b, err := backends.Lookup(sim.Name)
	if err != nil {
		t.Fatal(err)
	}
	err = backends.CheckConfig(b, backends.Config{Ranks: 2, Options: sim.Options{Links: sim.LinkModel{IntraAlpha: -1}}})
	if err == nil || !strings.Contains(err.Error(), "negative latency") {
		t.Fatalf("got %v, want the link model refused", err)
	}
	if err := backends.CheckConfig(b, backends.Config{Ranks: 2}); err != nil {
		t.Fatalf("nil options: %v", err)
	}
}
