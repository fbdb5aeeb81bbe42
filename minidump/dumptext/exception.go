package dumptext

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// printException prints MinidumpException::Print, with the parameters the
// record holds (at most 15).
func (d *dumper) printException(e *minidump.Exception) {
	r := &e.ExceptionRecord
	d.printf("MDException\n")
	d.printf("  thread_id                                  = 0x%x\n", e.ThreadID)
	d.printf("  exception_record.exception_code            = 0x%x\n", r.ExceptionCode)
	d.printf("  exception_record.exception_flags           = 0x%x\n", r.ExceptionFlags)
	d.printf("  exception_record.exception_record          = 0x%x\n", r.ExceptionRecord)
	d.printf("  exception_record.exception_address         = 0x%x\n", r.ExceptionAddress)
	d.printf("  exception_record.number_parameters         = %d\n", int32(r.NumberParameters))
	// Breakpad prints as many parameters as claimed, reading past the 15
	// the record holds; a claim of 2^32 would print gigabytes. The list is
	// bounded by what the record can hold, and a line says what was left
	// out (output that differs from Breakpad's, on hostile input only).
	n := min(r.NumberParameters, minidump.MaxExceptionParameters)
	for i := uint32(0); i < n; i++ {
		d.printf("  exception_record.exception_information[%2d] = 0x%x\n", i, e.Parameter(i))
	}
	if r.NumberParameters > n {
		d.printf("  exception_record.exception_information: %d more claimed, not printed (a record holds %d)\n", r.NumberParameters-n, n)
		// A claim past what the record holds is damage: exit non-zero.
		d.fail(fmt.Errorf("exception: %d parameters claimed, a record holds %d", r.NumberParameters, n))
	}
	d.printf("  thread_context.data_size                   = %d\n", int32(e.ThreadContext.DataSize))
	d.printf("  thread_context.rva                         = 0x%x\n", e.ThreadContext.Rva)
	d.context(e.Context)
}
