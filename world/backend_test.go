package world

import (
	"reflect"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	_ "github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/backends/tcp"
)

// TestBackendOptions: each backend makes its own options from the world's
// settings (backends.OptionsMaker); one that takes none gets nil.
func TestBackendOptions(t *testing.T) {
	links := &sim.LinkModel{IntraGBps: 7}
	w := WorldOptions{Own: links, Master: "h:1", Bind: "lo", ConnectTimeout: time.Second, OpTimeout: 2 * time.Second,
		Args: []string{"x"}, PerProcess: 3}
	tests := []struct {
		backend string
		w       WorldOptions
		want    any
	}{
		{"sim", w, sim.Options{Links: sim.LinkModel{IntraGBps: 7}}},
		{"sim", WorldOptions{}, sim.Options{}},
		{"tcp", w, tcp.Options{Master: "h:1", Bind: "lo", ConnectTimeout: time.Second, OpTimeout: 2 * time.Second,
			Args: []string{"x"}, PerProcess: 3}},
		{"shm", w, nil},
		{"no such backend", w, nil},
	}
	for _, tc := range tests {
		b, _ := World{Backend: tc.backend}.Resolve()
		if got := BackendOptions(b, tc.w); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.backend, got, tc.want)
		}
	}
}

// TestConfigOwn: the options a backend's own flags gave (World.Own) reach
// it, with the harness's links.
func TestConfigOwn(t *testing.T) {
	links := &sim.LinkModel{IntraGBps: 7}
	own := sim.Own{Alpha: time.Microsecond, ReduceGBps: 3}
	given := backends.WorldLinks{IntraGBps: 9, InterGBps: 4, PerServer: 2}
	tests := []struct {
		name  string
		links backends.WorldLinks
		w     World
		want  any
	}{
		{"the world's", backends.WorldLinks{}, World{Backend: "sim", Ranks: 2, Own: links}, sim.Options{Links: *links}},
		{"own options and the harness's links", given, World{Backend: "sim", Ranks: 2, Own: own},
			sim.Options{Links: sim.LinkModel{PerServer: 2, IntraAlpha: time.Microsecond, IntraGBps: 9, InterGBps: 4, ReduceGBps: 3}}},
		{"the harness's links alone", given, World{Backend: "sim", Ranks: 2},
			sim.Options{Links: sim.LinkModel{PerServer: 2, IntraGBps: 9, InterGBps: 4}}},
		{"none", backends.WorldLinks{}, World{Backend: "sim", Ranks: 2}, sim.Options{}},
	}
	for _, tc := range tests {
		if got := tc.w.Config(tc.links, false).Options; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
	}
}
