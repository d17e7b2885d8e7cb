package world

import (
	"errors"
	"testing"
	"time"

	_ "github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/fielderr"
)

// TestWorldFaultsValidate: World and Faults check themselves with nothing
// else set, as both harnesses use them, and each check names the field at
// fault.
func TestWorldFaultsValidate(t *testing.T) {
	world := World{Backend: "shm", Ranks: 8, Timeout: 2 * time.Minute, ConnectTimeout: 2 * time.Minute, LaunchedRank: -1}
	tests := []struct {
		name  string
		check func() error
		field fielderr.Field // "" for valid
	}{
		{"default world", world.Validate, ""},
		{"world without backend", World{Ranks: 2, Timeout: time.Second, ConnectTimeout: time.Second}.Validate, "Backend"},
		{"world of no ranks", func() error { w := world; w.Ranks = 0; return w.Validate() }, "Ranks"},
		{"world without timeout", func() error { w := world; w.Timeout = 0; return w.Validate() }, "Timeout"},
		{"world without connect timeout", func() error { w := world; w.ConnectTimeout = 0; return w.Validate() }, "ConnectTimeout"},
		{"world with a bad master", func() error { w := world; w.Master = "nohost"; return w.Validate() }, "Master"},
		{"no faults", Faults{}.Validate, ""},
		{"retry past the limit", Faults{Retry: MaxRetry + 1}.Validate, "Retry"},
		{"negative hold", Faults{Retry: 1, RetryHold: -1}.Validate, "RetryHold"},
		{"long interval", Faults{Retry: 1, RetryInterval: MaxRetryPause + 1}.Validate, "RetryInterval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check()
			var fe *fielderr.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.field != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want a *fielderr.FieldError for %s", err, tc.field)
			case tc.field != "" && fe.Field != tc.field:
				t.Fatalf("got %v naming %s, want %s", err, fe.Field, tc.field)
			}
		})
	}
}
