// Package bench holds the measurements behind `crawler bench ...`: each
// compares one of the crawler's components with the alternatives on the same
// input and returns a report that the command prints as one table.
package bench
