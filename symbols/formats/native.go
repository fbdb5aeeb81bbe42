package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	dsmacho "github.com/gobreakpad/gobreakpad/dumpsyms/macho"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
)

// DumpOptions are the options of DumpNative, per reader. ELF files are read
// with PE.Options (the options all readers share).
type DumpOptions struct {
	PE    dspe.Options
	MachO dsmacho.Options
}

// DumpNative reads the symbols of a native debug file, as dump_syms does:
// the reader is chosen by the file's first bytes, ELF (dumpsyms/elf),
// Mach-O (dumpsyms/macho; a directory is taken for a dSYM bundle), PDB 7.0
// or PE (dumpsyms/pe); anything else is refused with its first bytes named.
func DumpNative(path string, o DumpOptions) (*dumpsyms.Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return dsmacho.Dump(path, o.MachO)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var magic [64]byte
	n, err := io.ReadFull(f, magic[:])
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	switch head, f := string(magic[:n]), SniffHead(magic[:n]); {
	case f != nil && f.Name == "elf":
		return dself.Dump(path, o.PE.Options)
	case dsmacho.IsMachO(magic[:n]):
		return dsmacho.Dump(path, o.MachO)
	case f != nil && (f.Name == "pdb" || f.Name == "pe"):
		return dspe.DumpWith(path, o.PE)
	case strings.HasPrefix(head, "Microsoft C/C++ program database 2.00"):
		return nil, fmt.Errorf("%s: a PDB 2.00 file, which is not read (only PDB 7.0, MSF 7.00)", path)
	case n == 0:
		return nil, fmt.Errorf("%s: not an ELF, Mach-O, PE or PDB file (empty file)", path)
	}
	return nil, fmt.Errorf("%s: not an ELF, Mach-O, PE or PDB file (it starts with % x)", path, magic[:min(n, 4)])
}
