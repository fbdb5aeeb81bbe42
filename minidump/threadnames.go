package minidump

import "fmt"

// ThreadName is one entry of the thread name list (MDRawThreadName).
type ThreadName struct {
	ThreadID      uint32
	ThreadNameRva uint64
	// Name is the string at ThreadNameRva; NameErr says why it is empty
	// when it could not be read.
	Name    string
	NameErr error
}

const threadNameSize = 12

// ThreadNames decodes the thread name list stream.
func (f *File) ThreadNames() ([]ThreadName, error) {
	b, n, err := f.countedList(ThreadNamesStream, "thread name list", threadNameSize)
	if err != nil {
		return nil, err
	}
	names := make([]ThreadName, n)
	bud := f.newBudget()
	for i := range names {
		e := b[i*threadNameSize:]
		t := &names[i]
		t.ThreadID, t.ThreadNameRva = le32(e), le64(e[4:])
		if t.ThreadNameRva > 0xffffffff {
			t.NameErr = fmt.Errorf("thread name list: entry %d: name offset %#x past 4 GiB", i, t.ThreadNameRva)
			continue
		}
		if t.Name, t.NameErr = f.String(uint32(t.ThreadNameRva)); t.NameErr != nil {
			t.NameErr = fmt.Errorf("thread name list: entry %d: %w", i, t.NameErr)
		}
		if err := bud.take(len(t.Name)); err != nil {
			return nil, fmt.Errorf("thread name list: entry %d: %w", i, err)
		}
	}
	return names, nil
}
