package minidump

import "fmt"

// MaxExceptionParameters is the capacity of ExceptionRecord.ExceptionInformation.
const MaxExceptionParameters = 15

// ExceptionRecord describes an exception (MDException).
type ExceptionRecord struct {
	ExceptionCode        uint32
	ExceptionFlags       uint32
	ExceptionRecord      uint64 // address of a chained record in the process
	ExceptionAddress     uint64
	NumberParameters     uint32
	ExceptionInformation [MaxExceptionParameters]uint64
}

// Parameters returns the valid exception parameters (at most 15).
func (e *ExceptionRecord) Parameters() []uint64 {
	n := min(int(e.NumberParameters), MaxExceptionParameters)
	return e.ExceptionInformation[:n]
}

// Exception is the exception stream (MDRawExceptionStream) with its decoded
// context.
type Exception struct {
	ThreadID        uint32
	ExceptionRecord ExceptionRecord
	ThreadContext   LocationDescriptor

	// Context is the decoded ThreadContext, nil when ContextErr is set.
	Context    *Context
	ContextErr error
}

// Parameter returns exception parameter i as Breakpad's reader sees it,
// for any i below NumberParameters: past the MaxExceptionParameters stored,
// Breakpad reads beyond the array, so the first index past it overlays the
// context location (data size in the low half, offset in the high half),
// and later ones, whose values are unknown, are 0.
func (e *Exception) Parameter(i uint32) uint64 {
	switch {
	case i < MaxExceptionParameters:
		return e.ExceptionRecord.ExceptionInformation[i]
	case i == MaxExceptionParameters:
		return uint64(e.ThreadContext.DataSize) | uint64(e.ThreadContext.Rva)<<32
	}
	return 0
}

// Exception decodes the exception stream.
func (f *File) Exception() (*Exception, error) {
	b, err := f.stream(ExceptionStream)
	if err != nil {
		return nil, fmt.Errorf("exception: %w", err)
	}
	if len(b) != exceptionStreamSize {
		return nil, fmt.Errorf("exception: %d bytes, want %d", len(b), exceptionStreamSize)
	}
	e := &Exception{ThreadID: le32(b)}
	r := &e.ExceptionRecord
	r.ExceptionCode = le32(b[8:])
	r.ExceptionFlags = le32(b[12:])
	r.ExceptionRecord = le64(b[16:])
	r.ExceptionAddress = le64(b[24:])
	r.NumberParameters = le32(b[32:])
	for i := range r.ExceptionInformation {
		r.ExceptionInformation[i] = le64(b[40+8*i:])
	}
	e.ThreadContext = LocationDescriptor{le32(b[160:]), le32(b[164:])}
	e.Context, e.ContextErr = f.context(e.ThreadContext)
	if e.ContextErr != nil {
		e.ContextErr = fmt.Errorf("exception: %w", e.ContextErr)
	}
	return e, nil
}
