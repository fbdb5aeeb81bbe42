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
