// Package fielderr is the error a part of a plan or a world returns when one
// of its fields is wrong (FieldError): it names the field, and any other
// field its reason mentions, by the field's name, never by a flag, so that
// a plan built in Go reads it by field names and a command shows it by its
// flags (Names).
package fielderr

import (
	"fmt"
	"strings"
)

// ShortField is a field a reason mentions by the short form of the flag
// that sets it, as a hint to type it ("use a smaller -e"). Error shows it by
// the field's name, as a Field; a command shows it by its short form where
// it has one (Names.Short), and as a Field where it has none.
type ShortField Field

// Names is how a command shows the fields of a FieldError: Long names the
// flag that sets a field ("--maxbytes"), Short its short form ("-e"); either
// may be nil, and either returns "" for a field it does not name, which is
// then shown as Long shows it, or by the field's own name.
type Names struct {
	Long, Short func(Field) string
}

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
	// argument of type Field or ShortField is shown by name, one of type
	// error is wrapped (Unwrap).
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
func (e *FieldError) Error() string { return e.Format(Names{}) }

// Format returns the message with every field, the refused one and those
// its reason mentions, shown as names shows it; a field names does not name
// is shown by its own name.
func (e *FieldError) Format(names Names) string {
	show := func(f Field) string {
		if names.Long != nil {
			if s := names.Long(f); s != "" {
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
		case ShortField:
			a = show(Field(x))
			if names.Short != nil {
				if s := names.Short(Field(x)); s != "" {
					a = s
				}
			}
		case *FieldError:
			a = formatted{x, x.Format(names)}
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
// its tree shown as names shows them; an error without one reads as
// Error does. A FieldError wrapped in another error's text keeps that text
// around it.
func FormatFields(err error, names Names) string {
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
			s = strings.Replace(s, x.Error(), x.Format(names), 1)
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
