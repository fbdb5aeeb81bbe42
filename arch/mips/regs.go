package mips

// Register-file slots of an unwinder's frame, in the order Breakpad prints a
// MIPS frame's registers (gp, sp, fp, ra, pc, s0-s7), then the general
// registers Breakpad never prints but hands to STACK CFI rules.
const (
	RegGP = iota
	RegSP
	RegFP
	RegRA
	RegPC
	RegS0 // s0-s7 follow
)

// NumPrinted is how many slots Breakpad prints (gp through s7); NumRegs is
// the size of the register file (the 32 general registers and pc).
const (
	NumPrinted = RegS0 + 8
	NumRegs    = 33
)

// iregNames are the general registers' STACK CFI names in register-number
// order, as Breakpad's MIPS walker spells them: $t0 is "$to" there, so
// rules naming $t0 are of no use to it.
var iregNames = [32]string{
	"$zero", "$at", "$v0", "$v1", "$a0", "$a1", "$a2", "$a3", "$to", "$t1",
	"$t2", "$t3", "$t4", "$t5", "$t6", "$t7", "$s0", "$s1", "$s2", "$s3",
	"$s4", "$s5", "$s6", "$s7", "$t8", "$t9", "$k0", "$k1", "$gp", "$sp",
	"$fp", "$ra",
}

// Slot returns the register-file slot of general register n (0-31).
func Slot(n int) int {
	switch {
	case n >= IregS0 && n <= IregS7:
		return RegS0 + n - IregS0
	case n >= IregGP:
		return RegGP + n - IregGP
	case n < IregS0:
		return NumPrinted + n
	}
	return NumPrinted + n - 8 // t8, t9, k0, k1
}

// RegisterNames are the slots' names as Breakpad prints them, and
// CFIRegisterNames their names in STACK CFI rules ("$pc" for the program
// counter, which Breakpad's walker never gives rules to read). The slices
// must not be modified.
var RegisterNames, CFIRegisterNames = func() ([]string, []string) {
	n := make([]string, NumRegs)
	c := make([]string, NumRegs)
	for i, name := range iregNames {
		s := Slot(i)
		c[s], n[s] = name, name[1:]
	}
	c[RegPC], n[RegPC] = "$pc", "pc"
	return n, c
}()
