package backends

import (
	"strings"
	"testing"
)

func TestFindLaunch(t *testing.T) {
	vars := []LauncherVars{{Rank: "A_RANK", Size: "A_SIZE", Name: "a"}, {Rank: "B_RANK", Size: "B_SIZE", Name: "b"}}
	tests := []struct {
		name    string
		env     map[string]string
		want    Launch
		found   bool
		wantErr string
	}{
		{"none", map[string]string{}, Launch{}, false, ""},
		{"half of a pair", map[string]string{"A_RANK": "1"}, Launch{}, false, ""},
		{"first pair wins", map[string]string{"A_RANK": "1", "A_SIZE": "4", "B_RANK": "0", "B_SIZE": "2"},
			Launch{Rank: 1, Size: 4, Source: "a (A_RANK=1 A_SIZE=4)"}, true, ""},
		{"second pair", map[string]string{"B_RANK": "0", "B_SIZE": "2"}, Launch{Rank: 0, Size: 2, Source: "b (B_RANK=0 B_SIZE=2)"}, true, ""},
		{"rank outside the world", map[string]string{"A_RANK": "4", "A_SIZE": "4"}, Launch{}, true, "not a valid rank"},
		{"not numbers", map[string]string{"A_RANK": "x", "A_SIZE": "4"}, Launch{}, true, "A_RANK=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := FindLaunch(func(k string) string { return tt.env[k] }, vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || found != tt.found || got != tt.want {
				t.Errorf("got %+v, %v, %v; want %+v, %v", got, found, err, tt.want, tt.found)
			}
		})
	}
}
