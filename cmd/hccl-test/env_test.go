package main

import (
	"strings"
	"testing"
	"time"
)

// TestReadEnv: each command reads the variables of env.go's table that it
// honours, and no others, and the first bad one (in the order the command
// has always reported them) is the error.
func TestReadEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		cmd     envCommand
		wantErr string // "" for none
		check   func(environment) bool
	}{
		{"nothing set", nil, envSweep, "", func(e environment) bool {
			return e.execTimeout == 0 && !e.retry.enabled && !e.algoSet && e.cpuProfile == ""
		}},
		{"timeouts in seconds", map[string]string{"HCCL_EXEC_TIMEOUT": "7", "HCCL_CONNECT_TIMEOUT": "3"}, envScenario, "",
			func(e environment) bool { return e.execTimeout == 7*time.Second && e.connectTimeout == 3*time.Second }},
		{"GOMAXPROCS first", map[string]string{"GOMAXPROCS": "0", "HCCL_OP_RETRY_ENABLE": "bad", "HCCL_EXEC_TIMEOUT": "x"}, envSweep, "GOMAXPROCS", nil},
		{"retry before the timeouts", map[string]string{"HCCL_OP_RETRY_ENABLE": "bad", "HCCL_EXEC_TIMEOUT": "x"}, envSweep, "HCCL_OP_RETRY_ENABLE", nil},
		{"exec before connect", map[string]string{"HCCL_EXEC_TIMEOUT": "x", "HCCL_CONNECT_TIMEOUT": "x"}, envSweep, "HCCL_EXEC_TIMEOUT", nil},
		{"the scenario ignores retry", map[string]string{"HCCL_OP_RETRY_ENABLE": "bad", "HCCL_CONNECT_TIMEOUT": "x"}, envScenario, "HCCL_CONNECT_TIMEOUT", nil},
		{"retry on", map[string]string{"HCCL_OP_RETRY_ENABLE": "L1:1"}, envSweep, "",
			func(e environment) bool { return e.retry.enabled && e.retry.max == hcclRetryMax }},
		{"HCCL_ALGO set empty", map[string]string{"HCCL_ALGO": ""}, envSweep, "", func(e environment) bool { return e.algoSet && e.algo == "" }},
		{"the scenario ignores HCCL_ALGO and the profile", map[string]string{"HCCL_ALGO": "x", envCPUProfile: "p"}, envScenario, "",
			func(e environment) bool { return !e.algoSet && e.cpuProfile == "" }},
		{"profile", map[string]string{envCPUProfile: "p"}, envSweep, "", func(e environment) bool { return e.cpuProfile == "p" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			env, err := readEnv(lookup, tc.cmd)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error naming %s first", err, tc.wantErr)
			case tc.check != nil && !tc.check(env):
				t.Fatalf("got %+v", env)
			}
		})
	}
}
