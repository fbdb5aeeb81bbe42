// Package elfimage reads a module's symbols from its ELF image held in
// memory, such as the vDSO (linux-gate.so, linux-vdso.so.1) that
// minidump_capture and core2md save whole in a dump: its symbol table and
// .eh_frame become the same records dump_syms writes for a file, looked up
// through a Breakpad table. The walker uses it (stackwalk.Options.
// ImageSymbols) for modules no symbol file covers.
package elfimage

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Load reads the symbols of image, the bytes of module m as loaded. When m
// has a debug identifier, the image's must be the same.
func Load(image []byte, m symbols.Module) (*symbols.Symbols, error) {
	name := symstore.BaseName(m.CodeFile)
	d, err := dself.DumpImage(bytes.NewReader(image), dumpsyms.Options{Name: name})
	if err != nil {
		return nil, err
	}
	if m.DebugID != "" && !strings.EqualFold(d.Module.ID, m.DebugID) {
		return nil, fmt.Errorf("elfimage: %s: image's identifier %s is not the module's %s", name, d.Module.ID, m.DebugID)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		return nil, err
	}
	t, err := symfile.Parse(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("elfimage: %s: %w", name, err)
	}
	return symbreakpad.Symbols(t), nil
}
