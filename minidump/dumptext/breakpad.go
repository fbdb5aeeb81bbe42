package dumptext

import "github.com/gobreakpad/gobreakpad/minidump"

// printBreakpadInfo prints MinidumpBreakpadInfo::Print.
func (d *dumper) printBreakpadInfo(b *minidump.BreakpadInfo) {
	d.printf("MDRawBreakpadInfo\n")
	d.printf("  validity             = 0x%x\n", b.Validity)
	d.printf("  dump_thread_id       = %s\n", valueOrInvalid(b.Validity&minidump.BreakpadInfoValidDumpThreadID != 0, true, b.DumpThreadID))
	d.printf("  requesting_thread_id = %s\n", valueOrInvalid(b.Validity&minidump.BreakpadInfoValidRequestingThreadID != 0, true, b.RequestingThreadID))
	d.printf("\n")
}

// printAssertion prints MinidumpAssertion::Print.
func (d *dumper) printAssertion(a *minidump.AssertionInfo) {
	d.printf("MDAssertion\n")
	d.printf("  expression                                 = %s\n", cstr(minidump.UTF16String(a.Expression[:])))
	d.printf("  function                                   = %s\n", cstr(minidump.UTF16String(a.Function[:])))
	d.printf("  file                                       = %s\n", cstr(minidump.UTF16String(a.File[:])))
	d.printf("  line                                       = %d\n", a.Line)
	d.printf("  type                                       = %d\n", a.Type)
	d.printf("\n")
}
