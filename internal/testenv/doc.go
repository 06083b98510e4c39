// Package testenv gives integration tests the real servers they talk to: the
// Redis named by CRAWLER_TEST_REDIS (make test starts one of its own and
// sets it; a bare go test falls back to 127.0.0.1:6379) and the
// MongoDB-wire server named by CRAWLER_TEST_MONGO (make test starts an
// embedded FerretDB and sets it). Each test gets its own key prefix or
// database so tests run in parallel, and everything is removed afterwards.
// A missing server fails the test; it never skips. MovedRedis is the
// exception that proves it: an in-process Redis whose clock the test moves,
// for the protocol's time-dependent steps.
package testenv
