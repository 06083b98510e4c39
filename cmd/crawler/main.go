// Command crawler is the distributed crawler: one binary for the master, the
// slaves, the client and the all-in-one runner. See README.md.
package main

func main() { Execute() }
