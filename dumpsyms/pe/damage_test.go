package pe

import (
	"errors"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestDamageCollected: the hostile corpus's PDB with MSF page 10 zeroed
// loses a module's symbol records; the failure is collected in
// Options.Damage (which dump_syms prints by default and --strict turns into
// an error), not only told to Warn. The intact PDB collects nothing.
func TestDamageCollected(t *testing.T) {
	var dmg dumpsyms.Damage
	_, err := Dump(corpus.File(t, "hostile/pdb-regtest-page10-zeroed.pdb"), dumpsyms.Options{Damage: &dmg})
	if err != nil {
		t.Fatal(err)
	}
	lines := dmg.Lines()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "module symbol records: 1 failed to parse") {
		t.Errorf("damage %q", lines)
	}
	if err := dmg.Err(); !errors.Is(err, dumpsyms.ErrDamaged) {
		t.Errorf("Err() = %v", err)
	}
	var none dumpsyms.Damage
	if _, err := Dump(corpus.File(t, "windows/breakpad/dump_syms_regtest.pdb"), dumpsyms.Options{Damage: &none}); err != nil {
		t.Fatal(err)
	}
	if none.Len() != 0 || none.Err() != nil {
		t.Errorf("intact PDB: damage %q", none.Lines())
	}
}
