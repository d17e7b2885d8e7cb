package kit

import (
	"fmt"
	"strings"
)

// Field names a field of a sweep's plan (bench.Plan and its parts) or of a
// scenario's options, as Go spells it: "MaxBytes", "ConnectTimeout".
// Errors name fields, not command-line flags; a command shows each field
// the way its user sets it.
type Field string

// FieldError is a refusal of a setting that names the field at fault, and
// any other field its reason mentions, as Fields, so that a command can
// show them as its flags (Format) while the packages below it know no flag.
// Error shows them by their field names: "MaxBytes 3: larger than ...".
type FieldError struct {
	// Field is the field whose value is refused; the message starts with
	// it.
	Field Field
	// format and args make the rest of the message, as fmt.Errorf's; an
	// argument of type Field is shown by name, one of type error is
	// wrapped (Unwrap).
	format string
	args   []any
}

// fieldErrorf returns a FieldError for field whose message is the field's
// name followed by format, filled in as fmt.Errorf fills it: for example
// FieldErrorf("Ranks", " %d: need at least 1 rank", 0).
func FieldErrorf(field Field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, format: format, args: args}
}

// Error returns the message with every field shown by its own name.
func (e *FieldError) Error() string { return e.Format(nil) }

// Format returns the message with every field, the refused one and those
// its reason mentions, shown as name returns it; a nil name, or an empty
// name for a field, shows the field's own name.
func (e *FieldError) Format(name func(Field) string) string {
	show := func(f Field) string {
		if name != nil {
			if s := name(f); s != "" {
				return s
			}
		}
		return string(f)
	}
	args := make([]any, len(e.args))
	for i, a := range e.args {
		switch x := a.(type) {
		case Field:
			a = show(x)
		case *FieldError:
			a = formatted{x, x.Format(name)}
		}
		args[i] = a
	}
	return show(e.Field) + fmt.Errorf(e.format, args...).Error()
}

// formatted is a wrapped FieldError shown with the names of the one that
// wraps it.
type formatted struct {
	err  *FieldError
	text string
}

func (f formatted) Error() string { return f.text }
func (f formatted) Unwrap() error { return f.err }

// Unwrap returns the errors the message wraps, so that errors.Is and
// errors.As see through a FieldError.
func (e *FieldError) Unwrap() []error {
	var out []error
	for _, a := range e.args {
		if err, ok := a.(error); ok {
			out = append(out, err)
		}
	}
	return out
}

// FormatFields returns err's text with the fields of every FieldError in
// its tree shown as name returns them; an error without one reads as
// Error does. A FieldError wrapped in another error's text keeps that text
// around it.
func FormatFields(err error, name func(Field) string) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case nil:
			return
		case *FieldError:
			s = strings.Replace(s, x.Error(), x.Format(name), 1)
			return
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return s
}

// FirstError returns the error of the first check that fails, or nil: the
// order of the checks says which of two wrong settings is reported.
func FirstError(checks ...func() error) error {
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}
