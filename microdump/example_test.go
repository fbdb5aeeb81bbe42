package microdump_test

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/microdump"
)

// Parse reads the microdump lines out of a log (other lines and the log's
// prefixes are skipped): here a small x86 one with a crash, 16 bytes of
// stack, the CPU context and one module. stackwalk.ReadMicrodump turns it
// into a state to walk.
func ExampleParse() {
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x08048010, Esp: 0xffd00004}
	text := strings.Join([]string{
		"unrelated line",
		"W/google-breakpad( 3745): " + microdump.Begin,
		"W/google-breakpad( 3745): O L x86 02 i686 Linux 6.1 #1 SMP",
		"W/google-breakpad( 3745): R 0000000B SIGSEGV 00000010",
		"W/google-breakpad( 3745): S 0 FFD00004 FFD00000 00000010",
		"W/google-breakpad( 3745): S FFD00000 00112233445566778899AABBCCDDEEFF",
		"W/google-breakpad( 3745): C " + strings.ToUpper(hex.EncodeToString(ctx.Encode())),
		"W/google-breakpad( 3745): M 08048000 00000000 00001000 0123456789ABCDEF0123456789ABCDEF0 prog",
		"W/google-breakpad( 3745): " + microdump.End,
	}, "\n")
	md, err := microdump.Parse([]byte(text))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(md.OS.Name(), md.OS.Arch, md.Complete)
	fmt.Printf("%s at %#x\n", md.Crash.Reason, md.Crash.Address)
	fmt.Printf("stack %#x, %d bytes, sp %#x\n", md.Stack.Base, len(md.Stack.Data), md.Stack.SP)
	fmt.Printf("eip %#x\n", md.Context.X86.Eip)
	for _, m := range md.Modules {
		fmt.Printf("%s %s %#x-%#x\n", m.Name, m.ID, m.Base, m.Base+m.Size)
	}
	// Output:
	// Linux x86 true
	// SIGSEGV at 0x10
	// stack 0xffd00000, 16 bytes, sp 0xffd00004
	// eip 0x8048010
	// prog 0123456789ABCDEF0123456789ABCDEF0 0x8048000-0x8049000
}
