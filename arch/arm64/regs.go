package arm64

import "strconv"

// NumRegs is the number of slots of an unwinder's register file arm64 uses: x0-x28, then
// RegFP, RegLR, RegSP and RegPC, the order Breakpad prints them in.
const NumRegs = 33

// RegisterNames are the registers' names in slot order, as Breakpad prints
// them, and CFIRegisterNames their names in STACK CFI rules. The slices must
// not be modified.
var RegisterNames, CFIRegisterNames = func() ([]string, []string) {
	n := make([]string, NumRegs)
	c := make([]string, NumRegs)
	for i := 0; i < 31; i++ {
		n[i] = "x" + strconv.Itoa(i)
		c[i] = n[i]
	}
	n[RegFP], n[RegLR], n[RegSP], n[RegPC] = "fp", "lr", "sp", "pc"
	c[RegSP], c[RegPC] = "sp", "pc"
	return n, c
}()
