//go:build !linux

package memguard

import "errors"

// Resident returns this process's resident set size in bytes; here the
// system does not say, and the guard watches nothing.
func Resident() (int64, error) {
	return 0, errors.New("reading the resident size: not supported on this system")
}
