package render

import "syscall"

func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// pid is the browser's process id, 0 while none runs.
func (r *Renderer) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return 0
	}
	return r.cur.pid
}
