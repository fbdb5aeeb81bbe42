package unwind

// MaxExceptionParameters is how many parameters an exception record holds
// (Windows' EXCEPTION_MAXIMUM_PARAMETERS).
const MaxExceptionParameters = 15

// ExceptionRecord is the dump's exception record (the exception stream's
// MINIDUMP_EXCEPTION, laid out as Windows' EXCEPTION_RECORD64), as the walk
// gives it to the unwinder of the thread whose context is the exception's
// (Env.Exception): the record says how that context frame came to be, and a
// process that raised it in software may still hold the record on its
// stack (RaiseException builds it there).
type ExceptionRecord struct {
	Code, Flags uint32
	// Record is the address of a chained record in the process, or 0.
	Record uint64
	// Address is the ExceptionAddress: the faulting instruction, or, for
	// an exception raised in software on Windows x64, the return address
	// RtlRaiseException's caller resumes at (the context's pc).
	Address uint64
	// NumberParameters is the record's count, which may claim more than
	// the MaxExceptionParameters it can hold; Parameters holds the first
	// min(NumberParameters, MaxExceptionParameters).
	NumberParameters uint32
	Parameters       []uint64
}

// exceptionHeader is the size of an EXCEPTION_RECORD64 up to its
// parameters: code and flags, the chained record, the address, the count
// and its padding word.
const exceptionHeader = 4 * 8

// CopySize is the number of bytes an in-stack copy of r spans in the
// EXCEPTION_RECORD64 layout, up to its last stored parameter: the bytes
// CopyAt compares.
func (r *ExceptionRecord) CopySize() uint64 {
	return exceptionHeader + 8*uint64(r.storedParameters())
}

func (r *ExceptionRecord) storedParameters() int {
	return min(int(r.NumberParameters), MaxExceptionParameters, len(r.Parameters))
}

// CopyAt reports whether m holds a copy of r at addr in the layout of
// Windows' EXCEPTION_RECORD64: ExceptionCode and ExceptionFlags, the
// chained record's address, ExceptionAddress, NumberParameters (its 4
// padding bytes not compared) and the stored parameters, each equal to
// r's. A word that is a field of such a copy is the record's, not a saved
// register or a return address.
func (r *ExceptionRecord) CopyAt(m Memory, addr uint64) bool {
	if r == nil || addr+r.CopySize() < addr {
		return false
	}
	head := [3]uint64{uint64(r.Code) | uint64(r.Flags)<<32, r.Record, r.Address}
	for i, want := range head {
		if w, ok := Read64(m, addr+uint64(i)*8); !ok || w != want {
			return false
		}
	}
	if n, ok := Read32(m, addr+3*8); !ok || n != r.NumberParameters {
		return false
	}
	for i, want := range r.Parameters[:r.storedParameters()] {
		if w, ok := Read64(m, addr+exceptionHeader+uint64(i)*8); !ok || w != want {
			return false
		}
	}
	return true
}

// CopyHolding returns the start of an in-stack copy of r (CopyAt, at an
// address of the same alignment modulo 8 as addr) whose bytes hold the
// word at addr; ok false when there is none.
func (r *ExceptionRecord) CopyHolding(m Memory, addr uint64) (start uint64, ok bool) {
	if r == nil {
		return 0, false
	}
	for off := uint64(0); off < r.CopySize() && off <= addr; off += 8 {
		if r.CopyAt(m, addr-off) {
			return addr - off, true
		}
	}
	return 0, false
}

// FindCopy returns the lowest address in [lo, hi], stepping by 8 from lo,
// where m holds a copy of r (CopyAt); ok false when there is none. It
// stops at the first word m cannot give (the end of the stack).
func (r *ExceptionRecord) FindCopy(m Memory, lo, hi uint64) (addr uint64, ok bool) {
	if r == nil {
		return 0, false
	}
	first := uint64(r.Code) | uint64(r.Flags)<<32
	for a := lo; a <= hi && a >= lo; a += 8 {
		w, ok := Read64(m, a)
		if !ok {
			break
		}
		if w == first && r.CopyAt(m, a) {
			return a, true
		}
	}
	return 0, false
}
