package cluster

// CheckJobName returns the error a job file's name field would get for
// name, or nil for a valid one: what callers that take a job's name from
// elsewhere (an API path) check it with.
func CheckJobName(name string) error {
	return (&JobSpec{Name: name}).validateName()
}
