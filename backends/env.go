package backends

import (
	"slices"
	"sync"
)

// envChecks holds the environment variables the backends' packages read
// (RegisterEnv), each with the checks of its value.
var envChecks struct {
	mu     sync.Mutex // guards byName
	byName map[string][]func(string) error
}

// RegisterEnv records that a backend's package reads the environment
// variable name (of hccl-test's own prefix, HCCL_TEST_), with check, the
// grammar of its value (nil: any value). The command checks every such
// variable whenever it is set, whatever --backend says, since a job's
// environment serves every backend it runs, and refuses a name of the
// prefix that no package registered (a misspelling). Call it from the
// package's init; a name several packages read has each one's check, run
// in the order they registered.
func RegisterEnv(name string, check func(string) error) {
	envChecks.mu.Lock()
	defer envChecks.mu.Unlock()
	if envChecks.byName == nil {
		envChecks.byName = map[string][]func(string) error{}
	}
	envChecks.byName[name] = append(envChecks.byName[name], check)
}

// EnvNames returns the variables registered with RegisterEnv, in order.
func EnvNames() []string {
	envChecks.mu.Lock()
	defer envChecks.mu.Unlock()
	var names []string
	for name := range envChecks.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// CheckEnv checks v, the value of the variable name, with every check
// registered for it: known reports whether any package registered name,
// err is the first check's refusal (which names the variable and the
// value). An empty value is not checked: it is the variable unset.
func CheckEnv(name, v string) (known bool, err error) {
	envChecks.mu.Lock()
	checks, known := envChecks.byName[name]
	envChecks.mu.Unlock()
	for _, check := range checks {
		if check == nil || v == "" {
			continue
		}
		if err := check(v); err != nil {
			return true, err
		}
	}
	return known, nil
}
