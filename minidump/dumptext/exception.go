package dumptext

import "github.com/gobreakpad/gobreakpad/minidump"

// printException prints MinidumpException::Print, with as many parameters
// as the record claims.
func (d *dumper) printException(e *minidump.Exception) {
	r := &e.ExceptionRecord
	d.printf("MDException\n")
	d.printf("  thread_id                                  = 0x%x\n", e.ThreadID)
	d.printf("  exception_record.exception_code            = 0x%x\n", r.ExceptionCode)
	d.printf("  exception_record.exception_flags           = 0x%x\n", r.ExceptionFlags)
	d.printf("  exception_record.exception_record          = 0x%x\n", r.ExceptionRecord)
	d.printf("  exception_record.exception_address         = 0x%x\n", r.ExceptionAddress)
	d.printf("  exception_record.number_parameters         = %d\n", int32(r.NumberParameters))
	for i := uint32(0); i < r.NumberParameters; i++ {
		d.printf("  exception_record.exception_information[%2d] = 0x%x\n", i, e.Parameter(i))
	}
	d.printf("  thread_context.data_size                   = %d\n", int32(e.ThreadContext.DataSize))
	d.printf("  thread_context.rva                         = 0x%x\n", e.ThreadContext.Rva)
	d.context(e.Context)
}
