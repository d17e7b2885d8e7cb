package clustermodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hccl-test/hccl-test/internal/boundedfile"
)

// MaxFileBytes is the largest model file read: a model of every collective
// is a few KiB.
const MaxFileBytes = 1 << 20

// Load reads the model at path: a regular file (a directory, a named pipe
// or a device is refused by name), at most MaxFileBytes, one JSON object
// with no field this version does not know, that Validate accepts. Errors
// name path.
func Load(path string) (*Model, error) {
	if err := Regular(path); err != nil {
		return nil, err
	}
	data, err := boundedfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	m, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Decode reads a model from JSON and validates it. The version is checked
// first, so that a file of another version says so rather than which of
// its fields this build does not know.
func Decode(data []byte) (*Model, error) {
	// Unmarshal refuses anything but one JSON value, so the decoder
	// below reads the whole file.
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a model file (JSON): %v", err)
	}
	if head.Version == nil {
		return nil, errors.New("not a model file: no version (write one with hccl-test fit)")
	}
	if *head.Version != Version {
		return nil, fmt.Errorf("model version %d: this build reads version %d only (fit the logs again with this build)", *head.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	m := &Model{}
	if err := dec.Decode(m); err != nil {
		return nil, fmt.Errorf("not a model of version %d: %v", Version, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Encode writes m as indented JSON, after checking it with Validate.
func (m *Model) Encode(w io.Writer) error {
	if err := m.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// Regular returns an error unless path names a regular file: a missing
// file, a directory, a named pipe, a socket and a device are each named.
// The model and the logs are read as files, whole.
func Regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", path)
		}
		return err
	}
	switch mode := fi.Mode(); {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case mode&os.ModeNamedPipe != 0:
		return fmt.Errorf("%s is a named pipe: give a regular file (it is read whole, and may be read twice)", path)
	case mode&os.ModeDevice != 0:
		return fmt.Errorf("%s is a device: give a regular file", path)
	default:
		return fmt.Errorf("%s is not a regular file (%v)", path, mode.Type())
	}
}
