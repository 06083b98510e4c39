// Package proctmp gives each crawler process a temporary directory of its
// own, under which the temporary directories it and its children make go
// (the headless browser's profile, a private redis-server's socket and
// log), and removes those that crawler processes killed before they could
// clean up (kill -9, an OOM kill) left behind. Each directory names its
// owner, a process ID and start time, in a file: a directory whose owner
// is gone is removed by the next crawler that starts, one whose owner
// still runs is left alone.
package proctmp
