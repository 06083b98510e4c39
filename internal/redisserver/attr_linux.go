package redisserver

import "syscall"

// childAttr makes the server die with this process, even when it is
// killed: a crawler run that crashes leaves no redis-server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
