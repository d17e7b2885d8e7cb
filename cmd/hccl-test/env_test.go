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
		{"the scenario checks retry", map[string]string{"HCCL_OP_RETRY_ENABLE": "bad", "HCCL_CONNECT_TIMEOUT": "x"}, envScenario, "HCCL_OP_RETRY_ENABLE", nil},
		{"the scenario runs no re-executions", map[string]string{"HCCL_OP_RETRY_ENABLE": "L1:1"}, envScenario, "",
			func(e environment) bool { return !e.retry.enabled }},
		{"retry parameters checked with retry off", map[string]string{"HCCL_OP_RETRY_PARAMS": "bogus"}, envSweep, `HCCL_OP_RETRY_PARAMS="bogus"`, nil},
		{"retry parameters checked with retry at level 0", map[string]string{"HCCL_OP_RETRY_ENABLE": "L1:0", "HCCL_OP_RETRY_PARAMS": "MaxCnt:0"}, envSweep, `HCCL_OP_RETRY_PARAMS="MaxCnt:0"`, nil},
		{"retry parameters apply with retry on", map[string]string{"HCCL_OP_RETRY_ENABLE": "L1:1", "HCCL_OP_RETRY_PARAMS": "MaxCnt:3"}, envSweep, "",
			func(e environment) bool { return e.retry.enabled && e.retry.max == 3 }},
		{"kernels misspelt", map[string]string{"HCCL_TEST_KERNELS": "portabel"}, envScenario, `HCCL_TEST_KERNELS="portabel"`, nil},
		{"kernels portable", map[string]string{"HCCL_TEST_KERNELS": "portable"}, envSweep, "", nil},
		{"a name of ours nothing reads", map[string]string{"HCCL_TEST_KERNEL": "portable"}, envSweep, `HCCL_TEST_KERNEL="portable": hccl-test reads no such variable`, nil},
		{"a retry name nothing reads", map[string]string{"HCCL_OP_RETRY_COUNT": "3"}, envSweep, `HCCL_OP_RETRY_COUNT="3"`, nil},
		{"another HCCL variable is not ours", map[string]string{"HCCL_BUFFSIZE": "200"}, envSweep, "", nil},
		{"a half-set launcher", map[string]string{"WORLD_SIZE": "4"}, envScenario, `WORLD_SIZE="4": set without RANK`, nil},
		{"a whole launcher", map[string]string{"RANK": "0", "WORLD_SIZE": "4"}, envSweep, "", nil},
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
			var names []string
			for k, v := range tc.env {
				names = append(names, k+"="+v)
			}
			env, err := readEnv(lookup, names, tc.cmd)
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
