package cluster

import "fmt"

// FieldError is an option that is out of range, named by its Go field
// (Options.Concurrency is "Concurrency"). Libraries return it from their
// Validate methods; the command line maps the field to its flag
// (--concurrency), so each layer names the setting the way its user wrote
// it.
type FieldError struct {
	// Field is the option's field name in the package that owns it.
	Field string
	// Value is what it was set to.
	Value any
	// Problem says what is wrong, e.g. "is outside 1..10000".
	Problem string
}

// Error names the field, its value and the problem.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v %s", e.Field, e.Value, e.Problem)
}

// Invalid returns a *FieldError.
func Invalid(field string, value any, problem string, args ...any) error {
	return &FieldError{Field: field, Value: value, Problem: fmt.Sprintf(problem, args...)}
}
