package unwind

// VDSOEnv is what an Env may also implement to say which addresses lie in
// the Linux vDSO (the module Breakpad's client names linux-gate.so), whose
// code a dump often lacks.
type VDSOEnv interface {
	// InVDSO says whether addr lies in the vDSO.
	InVDSO(addr uint64) bool
}

// InVDSO says whether env knows addr to lie in the vDSO (false when env
// does not implement VDSOEnv).
func InVDSO(env Env, addr uint64) bool {
	v, ok := env.(VDSOEnv)
	return ok && v.InVDSO(addr)
}

// VsyscallEnv is what an Env may also implement to say where Linux i386's
// __kernel_vsyscall starts: the auxiliary vector's AT_SYSINFO, which the
// kernel sets to that function's address in the vDSO (and glibc calls for
// system calls), known from the dump's copy of /proc/PID/auxv.
type VsyscallEnv interface {
	// KernelVsyscall returns __kernel_vsyscall's address, and whether it
	// is known.
	KernelVsyscall() (uint64, bool)
}

// KernelVsyscall returns where env says __kernel_vsyscall starts (ok
// false when env does not implement VsyscallEnv or does not know).
func KernelVsyscall(env Env) (uint64, bool) {
	v, ok := env.(VsyscallEnv)
	if !ok {
		return 0, false
	}
	return v.KernelVsyscall()
}
