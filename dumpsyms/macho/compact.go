package macho

import "github.com/gobreakpad/gobreakpad/dumpsyms"

// compactUnwind adds STACK CFI from __unwind_info (to come).
func compactUnwind(o *object, out *dumpsyms.Model, warn func(string, ...any)) error {
	return nil
}
