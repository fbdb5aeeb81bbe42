package minidump

import "fmt"

// Thread is one entry of the thread list (MDRawThread) with its decoded
// context.
type Thread struct {
	ThreadID      uint32
	SuspendCount  uint32
	PriorityClass uint32
	Priority      uint32
	Teb           uint64
	Stack         MemoryDescriptor
	ThreadContext LocationDescriptor

	// Context is the decoded ThreadContext, nil when ContextErr is set.
	Context    *Context
	ContextErr error
}

// ThreadList decodes the thread list stream. A thread whose context cannot be
// decoded is still returned, with ContextErr set.
func (f *File) ThreadList() ([]Thread, error) {
	b, n, err := f.countedList(ThreadListStream, "thread list", threadSize)
	if err != nil {
		return nil, err
	}
	threads := make([]Thread, n)
	bud := f.newBudget()
	for i := range threads {
		e := b[i*threadSize:]
		t := &threads[i]
		t.ThreadID = le32(e)
		t.SuspendCount = le32(e[4:])
		t.PriorityClass = le32(e[8:])
		t.Priority = le32(e[12:])
		t.Teb = le64(e[16:])
		t.Stack = memoryDescriptor(e[24:])
		t.ThreadContext = LocationDescriptor{le32(e[40:]), le32(e[44:])}
		if err := bud.take(int(t.ThreadContext.DataSize)); err != nil {
			return nil, fmt.Errorf("thread list: entry %d: contexts: %w", i, err)
		}
		t.Context, t.ContextErr = f.context(t.ThreadContext)
		if t.ContextErr != nil {
			t.ContextErr = fmt.Errorf("thread list: entry %d (thread %#x): %w", i, t.ThreadID, t.ContextErr)
		}
	}
	return threads, nil
}

// StackMemory returns the bytes of the thread's stack memory descriptor.
func (f *File) StackMemory(t *Thread) ([]byte, error) {
	b, err := f.location(t.Stack.Memory)
	if err != nil {
		return nil, fmt.Errorf("thread %#x: stack: %w", t.ThreadID, err)
	}
	return b, nil
}

func memoryDescriptor(b []byte) MemoryDescriptor {
	return MemoryDescriptor{le64(b), LocationDescriptor{le32(b[8:]), le32(b[12:])}}
}
