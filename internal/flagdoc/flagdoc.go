// Package flagdoc holds what a flag says of itself beyond its usage, as
// pflag annotations that any package defining flags may set and the
// command's --help and checks read: what the flag takes, as --help's left
// column shows it (Arg), and, for a backend's own flag, what the backend
// has that makes the flag mean something (Only) and the fields of its
// options that it sets, which refusals name (Sets). It imports only pflag:
// a leaf that the backends and the command share.
package flagdoc

import "github.com/spf13/pflag"

// Annotation keys.
const (
	argKey  = "hccl-test/arg"
	onlyKey = "hccl-test/only"
	setsKey = "hccl-test/sets"
)

// Arg says what the flag name of fs takes, as --help's left column shows it
// after the name: "LIST", "SIZE", "0|1"; one that starts with "=" is joined
// to the name, as --sim-data=false. A flag without one shows its type
// (none for a switch). It panics if fs has no such flag: a programming
// error that every --help shows.
func Arg(fs *pflag.FlagSet, name, what string) { set(fs, name, argKey, what) }

// ArgOf returns what Arg said f takes, and whether it said anything.
func ArgOf(f *pflag.Flag) (string, bool) {
	if a := f.Annotations[argKey]; len(a) > 0 {
		return a[0], true
	}
	return "", false
}

// Only says why the flag name of fs, one of a backend's own, means
// something on that backend alone ("simulates links"), for the refusal of
// the flag on another backend: "--sim-alpha: only --backend sim simulates
// links". value, if not "", is the one value that alone is refused
// elsewhere ("false" for --sim-data=false); other values are taken and
// mean nothing. It panics if fs has no such flag.
func Only(fs *pflag.FlagSet, name, value, why string) { set(fs, name, onlyKey, why, value) }

// OnlyOf returns what Only said of f: why, value, and whether it said
// anything.
func OnlyOf(f *pflag.Flag) (why, value string, ok bool) {
	if a := f.Annotations[onlyKey]; len(a) == 2 {
		return a[0], a[1], true
	}
	return "", "", false
}

// Sets says that the flag name of fs sets field, a field of the options
// made of it as Go spells it ("Alpha"), which a refusal of the options
// (a fielderr.FieldError) names: the command shows the field as shown
// ("--sim-alpha inter="), or as "--name" when shown is "". A flag may set
// several fields. It panics if fs has no such flag.
func Sets(fs *pflag.FlagSet, name, field, shown string) {
	if shown == "" {
		shown = "--" + name
	}
	f := fs.Lookup(name)
	if f == nil {
		panic("flagdoc: no flag " + name)
	}
	set(fs, name, setsKey, append(f.Annotations[setsKey], field, shown)...)
}

// FieldsOf returns what Sets said of f: each field it sets and how the
// command shows it.
func FieldsOf(f *pflag.Flag) map[string]string {
	a := f.Annotations[setsKey]
	m := make(map[string]string, len(a)/2)
	for i := 0; i+1 < len(a); i += 2 {
		m[a[i]] = a[i+1]
	}
	return m
}

// set annotates the flag name of fs with key and values.
func set(fs *pflag.FlagSet, name, key string, values ...string) {
	if err := fs.SetAnnotation(name, key, values); err != nil {
		panic(err)
	}
}
