package cfi

// MaxRegisters is the most register names an Evaluator can have.
const MaxRegisters = 64

// Registers is a register file addressed by the indices an Evaluator gives
// its register names. A register holds a value only when its bit in Valid
// is set. The zero value has no valid registers.
type Registers struct {
	Values [MaxRegisters]uint64
	Valid  uint64 // bit i set: Values[i] holds register i
}

// Set stores v in register i and marks it valid. i must be in [0, MaxRegisters).
func (r *Registers) Set(i int, v uint64) {
	r.Values[i] = v
	r.Valid |= 1 << i
}

// Get returns register i and whether it is valid.
func (r *Registers) Get(i int) (uint64, bool) {
	if i < 0 || i >= MaxRegisters || r.Valid&(1<<i) == 0 {
		return 0, false
	}
	return r.Values[i], true
}

// Clear marks register i invalid.
func (r *Registers) Clear(i int) { r.Valid &^= 1 << i }

// Has reports whether register i is valid.
func (r *Registers) Has(i int) bool {
	return i >= 0 && i < MaxRegisters && r.Valid&(1<<i) != 0
}

// Memory is the memory of a dump as the evaluator reads it (docs/design.md):
// ReadMemory returns n bytes at addr, or an error when the dump does not
// hold them. *minidump.Memory implements it.
type Memory interface {
	ReadMemory(addr uint64, n int) ([]byte, error)
}
