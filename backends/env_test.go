package backends_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
)

// TestRegisterEnv: a variable a backend's package registers is known, and
// checked by every check registered for it in the order they were, an
// empty value by none; a name no package registered is unknown.
func TestRegisterEnv(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	backends.RegisterEnv("HCCL_TEST_ENVTEST_A", func(v string) error {
		if v == "bad" || v == "both" {
			return first
		}
		return nil
	})
	backends.RegisterEnv("HCCL_TEST_ENVTEST_A", func(v string) error {
		if v == "worse" || v == "both" {
			return second
		}
		return nil
	})
	backends.RegisterEnv("HCCL_TEST_ENVTEST_B", nil)
	tests := []struct {
		name, v string
		known   bool
		err     error
	}{
		{"HCCL_TEST_ENVTEST_A", "good", true, nil},
		{"HCCL_TEST_ENVTEST_A", "bad", true, first},
		{"HCCL_TEST_ENVTEST_A", "worse", true, second},
		{"HCCL_TEST_ENVTEST_A", "both", true, first},
		{"HCCL_TEST_ENVTEST_A", "", true, nil},
		{"HCCL_TEST_ENVTEST_B", "anything", true, nil},
		{"HCCL_TEST_ENVTEST_C", "x", false, nil},
	}
	for _, tc := range tests {
		known, err := backends.CheckEnv(tc.name, tc.v)
		if known != tc.known || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%s=%q: known %v, err %v; want %v, %v", tc.name, tc.v, known, err, tc.known, tc.err)
		}
	}
	names := backends.EnvNames()
	if !slices.IsSorted(names) || !slices.Contains(names, "HCCL_TEST_ENVTEST_A") || !slices.Contains(names, "HCCL_TEST_ENVTEST_B") {
		t.Errorf("EnvNames %v: want both names, in order", names)
	}
}
