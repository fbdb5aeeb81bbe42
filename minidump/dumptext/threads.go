package dumptext

import "github.com/gobreakpad/gobreakpad/minidump"

// printThreads prints MinidumpThreadList::Print: each thread, its context
// and its stack memory.
func (d *dumper) printThreads(threads []minidump.Thread) {
	d.printf("MinidumpThreadList\n")
	d.printf("  thread_count = %d\n", len(threads))
	d.printf("\n")
	for i := range threads {
		t := &threads[i]
		d.printf("thread[%d]\n", i)
		d.printf("MDRawThread\n")
		d.printf("  thread_id                   = 0x%x\n", t.ThreadID)
		d.printf("  suspend_count               = %d\n", int32(t.SuspendCount))
		d.printf("  priority_class              = 0x%x\n", t.PriorityClass)
		d.printf("  priority                    = 0x%x\n", t.Priority)
		d.printf("  teb                         = 0x%x\n", t.Teb)
		d.printf("  stack.start_of_memory_range = 0x%x\n", t.Stack.StartOfMemoryRange)
		d.printf("  stack.memory.data_size      = 0x%x\n", t.Stack.Memory.DataSize)
		d.printf("  stack.memory.rva            = 0x%x\n", t.Stack.Memory.Rva)
		d.printf("  thread_context.data_size    = 0x%x\n", t.ThreadContext.DataSize)
		d.printf("  thread_context.rva          = 0x%x\n", t.ThreadContext.Rva)
		d.context(t.Context)
		if t.HasStack() {
			d.printf("Stack\n")
			d.memory(t.Stack.Memory)
		} else {
			d.printf("No stack\n")
		}
		d.printf("\n")
	}
}

// printThreadNames prints MinidumpThreadNameList::Print.
func (d *dumper) printThreadNames(names []minidump.ThreadName) {
	d.printf("MinidumpThreadNameList\n")
	d.printf("  thread_name_count = %d\n", len(names))
	d.printf("\n")
	for i, n := range names {
		d.printf("thread_name[%d]\n", i)
		d.printf("MDRawThreadName\n")
		d.printf("  thread_id                   = 0x%x\n", n.ThreadID)
		d.printf("  thread_name_rva             = 0x%x\n", n.ThreadNameRva)
		d.printf("  thread_name                 = \"%s\"\n", cstr(n.Name))
		d.printf("\n")
	}
}
