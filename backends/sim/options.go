package sim

import (
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
)

// Options are the sim backend's own settings (backends.Config.Options).
// The zero Options, like a nil one, simulate DefaultLinkModel.
type Options struct {
	// Links is the simulated links' model; zero fields take
	// DefaultLinkModel's values (LinkModel.WithDefaults).
	Links LinkModel
}

// options returns cfg's Options: the zero value for nil, an error naming
// the type for another backend's.
func options(cfg backends.Config) (Options, error) {
	switch o := cfg.Options.(type) {
	case nil:
		return Options{}, nil
	case Options:
		return o, nil
	case *Options:
		if o == nil {
			return Options{}, nil
		}
		return *o, nil
	default:
		return Options{}, backends.OptionsError(Name, o, "sim.Options")
	}
}

// CheckConfig implements backends.ConfigChecker: the options are sim's and
// their link model is valid.
func (Backend) CheckConfig(cfg backends.Config) error {
	o, err := options(cfg)
	if err != nil {
		return err
	}
	if err := o.Links.Validate(); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	return nil
}

// Options makes the sim's options from the world's settings
// (backends.OptionsMaker): its link model is made of s.Own, its own
// options (an Own), and s.Links (settingsLinks).
func (Backend) Options(s backends.Settings) any {
	return Options{Links: settingsLinks(s)}
}

// LinkBytes is what one simulated rank's links take (backends.LinkMemory):
// shm's, whose transport carries sim's messages, with a second table of
// pairs, the fabric's timings besides the world's links.
func (Backend) LinkBytes(ranks, peers int) int64 { return shm.LinkBytes(2, ranks, peers) }
