package backends

import "github.com/spf13/pflag"

// FlagDefiner is implemented by a backend with flags of its own, which the
// command defines in its section for the backend and refuses on every
// other backend. DefineFlags defines them on fs, with their help, and
// returns the function that, once fs is parsed, makes the backend's own
// options of them (Settings.Own, which its OptionsMaker reads) or refuses
// them: its error names the flag and the value, and is bad input.
type FlagDefiner interface {
	DefineFlags(fs *pflag.FlagSet) func() (any, error)
}
