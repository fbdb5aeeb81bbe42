package symfile

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// A Writer writes symbol file records in Breakpad's exact text form: hex
// numbers in lower case without leading zeros, decimal where Breakpad uses
// decimal, single spaces and "\n" line ends, as Breakpad's dump_syms emits them.
//
// Writes are buffered; call Flush when done. The first error stops all further
// writing and is returned by every later call, so callers may check only the
// result of Flush.
type Writer struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer that writes to w through a buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 256)}
}

// Flush writes any buffered data to the underlying io.Writer and returns the
// first error met by this Writer, if any.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.w.Flush()
	return w.err
}

// emit writes the line in w.buf followed by a newline.
func (w *Writer) emit() error {
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, '\n')
	_, w.err = w.w.Write(w.buf)
	return w.err
}

func (w *Writer) start(keyword string) {
	w.buf = append(w.buf[:0], keyword...)
}

func (w *Writer) hex(v uint64) {
	w.buf = append(w.buf, ' ')
	w.buf = strconv.AppendUint(w.buf, v, 16)
}

func (w *Writer) dec(v uint64) {
	w.buf = append(w.buf, ' ')
	w.buf = strconv.AppendUint(w.buf, v, 10)
}

func (w *Writer) sdec(v int64) {
	w.buf = append(w.buf, ' ')
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

func (w *Writer) str(s string) {
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, s...)
}

// WriteModule writes "MODULE os arch id name".
func (w *Writer) WriteModule(m Module) error {
	w.start("MODULE")
	w.str(m.OS)
	w.str(m.Arch)
	w.str(m.ID)
	w.str(m.Name)
	return w.emit()
}

// WriteCodeID writes "INFO CODE_ID id", followed by " file" when c.File is set.
func (w *Writer) WriteCodeID(c CodeID) error {
	w.start("INFO CODE_ID")
	w.str(c.ID)
	if c.File != "" {
		w.str(c.File)
	}
	return w.emit()
}

// WriteInfo writes "INFO key value" (or "INFO key" when the value is empty).
func (w *Writer) WriteInfo(i Info) error {
	w.start("INFO")
	w.str(i.Key)
	if i.Value != "" {
		w.str(i.Value)
	}
	return w.emit()
}

// WriteFile writes "FILE number name".
func (w *Writer) WriteFile(f File) error {
	w.start("FILE")
	w.dec(uint64(f.Number))
	w.str(f.Name)
	return w.emit()
}

// WriteInlineOrigin writes "INLINE_ORIGIN id name", or the older
// "INLINE_ORIGIN id file name" when o.HasFile is set.
func (w *Writer) WriteInlineOrigin(o InlineOrigin) error {
	w.start("INLINE_ORIGIN")
	w.dec(uint64(o.ID))
	if o.HasFile {
		w.sdec(int64(o.File))
	}
	w.str(o.Name)
	return w.emit()
}

// WriteFunc writes "FUNC [m ]address size parameter_size name" (numbers in hex).
func (w *Writer) WriteFunc(f Func) error {
	w.start("FUNC")
	if f.Multiple {
		w.str("m")
	}
	w.hex(f.Address)
	w.hex(f.Size)
	w.hex(f.ParamSize)
	w.str(f.Name)
	return w.emit()
}

// WriteLine writes a line record "address size line filenum" (address and size
// in hex, line and file number in decimal).
func (w *Writer) WriteLine(l Line) error {
	w.buf = strconv.AppendUint(w.buf[:0], l.Address, 16)
	w.hex(l.Size)
	w.sdec(l.Line)
	w.dec(uint64(l.File))
	return w.emit()
}

// WriteInline writes "INLINE depth call_line [call_file ]origin address size...",
// the depth, line, file and origin in decimal and the ranges in hex. The call
// site file is written only when in.HasCallFile is set (the older form omits it).
func (w *Writer) WriteInline(in Inline) error {
	w.start("INLINE")
	w.dec(uint64(in.Depth))
	w.dec(uint64(in.CallLine))
	if in.HasCallFile {
		w.sdec(int64(in.CallFile))
	}
	w.dec(uint64(in.Origin))
	for _, r := range in.Ranges {
		w.hex(r.Address)
		w.hex(r.Size)
	}
	return w.emit()
}

// WritePublic writes "PUBLIC [m ]address parameter_size name" (numbers in hex).
func (w *Writer) WritePublic(p Public) error {
	w.start("PUBLIC")
	if p.Multiple {
		w.str("m")
	}
	w.hex(p.Address)
	w.hex(p.ParamSize)
	w.str(p.Name)
	return w.emit()
}

// WriteCFIInit writes "STACK CFI INIT address size rules" (numbers in hex).
func (w *Writer) WriteCFIInit(c CFIInit) error {
	w.start("STACK CFI INIT")
	w.hex(c.Address)
	w.hex(c.Size)
	w.str(c.Rules)
	return w.emit()
}

// WriteCFI writes the delta record "STACK CFI address rules" (address in hex).
func (w *Writer) WriteCFI(c CFI) error {
	w.start("STACK CFI")
	w.hex(c.Address)
	w.str(c.Rules)
	return w.emit()
}

// WriteStackWin writes "STACK WIN type rva code_size prologue_size epilogue_size
// parameter_size saved_register_size local_size max_stack_size has_program_string
// program_string_OR_allocates_base_pointer": the numbers in hex,
// has_program_string and allocates_base_pointer as 0 or 1.
func (w *Writer) WriteStackWin(s StackWin) error {
	w.start("STACK WIN")
	w.hex(uint64(s.Type))
	w.hex(uint64(s.RVA))
	w.hex(uint64(s.CodeSize))
	w.hex(uint64(s.PrologSize))
	w.hex(uint64(s.EpilogSize))
	w.hex(uint64(s.ParamSize))
	w.hex(uint64(s.SavedRegisterSize))
	w.hex(uint64(s.LocalSize))
	w.hex(uint64(s.MaxStackSize))
	if s.HasProgramString {
		w.str("1")
		w.str(s.ProgramString)
	} else {
		w.str("0")
		if s.AllocatesBasePointer {
			w.str("1")
		} else {
			w.str("0")
		}
	}
	return w.emit()
}

// WriteRecord writes any record read by a Reader.
func (w *Writer) WriteRecord(r Record) error {
	switch r := r.(type) {
	case Module:
		return w.WriteModule(r)
	case CodeID:
		return w.WriteCodeID(r)
	case Info:
		return w.WriteInfo(r)
	case File:
		return w.WriteFile(r)
	case InlineOrigin:
		return w.WriteInlineOrigin(r)
	case Func:
		return w.WriteFunc(r)
	case Line:
		return w.WriteLine(r)
	case Inline:
		return w.WriteInline(r)
	case Public:
		return w.WritePublic(r)
	case CFIInit:
		return w.WriteCFIInit(r)
	case CFI:
		return w.WriteCFI(r)
	case StackWin:
		return w.WriteStackWin(r)
	}
	return fmt.Errorf("symfile: cannot write a %T record", r)
}
