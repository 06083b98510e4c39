package jobspec

// CheckName returns the error a job file's name field would get for
// name, or nil for a valid one: what callers that take a job's name from
// elsewhere (an API path) check it with.
func CheckName(name string) error {
	return (&Job{Name: name}).validateName()
}
