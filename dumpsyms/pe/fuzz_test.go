package pe

import (
	"bytes"
	"debug/pe"
	"io"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// FuzzDumpPDB runs the whole PDB reader — type name formatting, inline
// annotations, OMAP mapping, frame data — on mutated files. Seeded with a
// small PDB of the package's test data (77 KB: the corpus's smallest, 610 KB,
// made each run so slow that a minute explored 21,640 inputs).
func FuzzDumpPDB(f *testing.F) {
	if b, err := os.ReadFile("testdata/thunks/thunks.pdb"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(pdb.Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Through an io.ReaderAt (streams copied) or in memory (streams as
		// slices or pieces of the file, as pdb.Open maps it): one per run,
		// by the input's length, so each run reads the file once.
		open := pdb.NewFileBytes
		if len(data)%2 == 1 {
			open = func(b []byte) (*pdb.File, error) { return pdb.NewFile(bytes.NewReader(b), int64(len(b))) }
		}
		pf, err := open(data)
		if err != nil {
			return
		}
		var dmg dumpsyms.Damage
		s, err := DumpPDB(pf, "fuzz.pdb", dumpsyms.Options{Inlines: true, Damage: &dmg})
		dmg.Lines()
		if err != nil {
			return
		}
		s.Write(io.Discard)
	})
}

// FuzzDumpPEOnly runs both forms of a PE without its PDB (Breakpad's
// exports and unwind rules, Mozilla's .pdata placeholders) on mutated
// images, seeded with the project's own small x64 crash.exe.
func FuzzDumpPEOnly(f *testing.F) {
	if b, err := os.ReadFile("../../cmd/dump_syms/testdata/wincrash/crash.exe"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := pe.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, form := range []PEOnlyForm{PEOnlyBreakpad, PEOnlyMozilla} {
			s, err := dumpPEFile(pf, "fuzz.exe", Options{PEOnly: form})
			if err != nil {
				continue
			}
			s.Write(io.Discard)
		}
	})
}
