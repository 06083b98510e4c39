//go:build !linux

package redisserver

import "syscall"

// childAttr: elsewhere the server is stopped by Close only.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
