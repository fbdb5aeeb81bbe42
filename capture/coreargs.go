package capture

import (
	"bytes"
	"debug/elf"

	"github.com/gobreakpad/gobreakpad/capture/elfcore"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// auxv entry types pointing into the initial stack.
const (
	atRandom = 25
	atExecFn = 31
)

// Bounds of the argument search.
const (
	maxArgScan   = 256 << 10 // bytes at the top of the stack searched
	maxArgCount  = 1 << 16
	maxArgString = 1 << 16
)

// recoverArgs finds the program's arguments and environment on the initial
// stack, which a core holds though no note records them in full. The kernel
// (and qemu-user) lay the stack out as argc, argv[], NULL, envp[], NULL,
// auxv pairs, with the strings above; the auxv pairs are found by their
// bytes, which NT_AUXV repeats, and the pointer arrays are read backwards
// from there. It returns nils when the layout is not found.
func recoverArgs(core *elfcore.File, mem memoryReader, maps []procfs.Mapping) (cmdline, environ []byte) {
	word := 8
	if core.Class == elf.ELFCLASS32 {
		word = 4
	}
	bo := core.ByteOrder
	get := func(b []byte) uint64 {
		if word == 4 {
			return uint64(bo.Uint32(b))
		}
		return bo.Uint64(b)
	}
	anchor, ok := auxvValue(core, atExecFn)
	if !ok {
		if anchor, ok = auxvValue(core, atRandom); !ok {
			return nil, nil
		}
	}
	i := procfs.Find(maps, anchor)
	if i < 0 {
		return nil, nil
	}
	lo := maps[i].Start
	if maps[i].End-lo > maxArgScan {
		lo = maps[i].End - maxArgScan
	}
	stack, err := mem.ReadMemory(lo, int(maps[i].End-lo))
	if err != nil {
		return nil, nil
	}
	auxv := core.Auxv
	if len(auxv) < 2*word {
		return nil, nil
	}
	at := bytes.Index(stack, auxv[:min(len(auxv), 8*word)])
	if at < word || at%word != 0 {
		return nil, nil
	}
	// Read the pointer arrays backwards: envp's terminating NULL just below
	// auxv, then envp, argv's NULL, argv, and argc, which equals argv's length.
	w := at/word - 1
	if get(stack[w*word:]) != 0 {
		return nil, nil
	}
	var env, args []uint64
	for w--; w >= 0 && get(stack[w*word:]) != 0 && len(env) < maxArgCount; w-- {
		env = append(env, get(stack[w*word:]))
	}
	for w--; w >= 0 && uint64(len(args)) != get(stack[w*word:]) && len(args) < maxArgCount; w-- {
		args = append(args, get(stack[w*word:]))
	}
	if w < 0 || uint64(len(args)) != get(stack[w*word:]) {
		return nil, nil
	}
	str := func(ptrs []uint64) []byte {
		var out []byte
		for k := len(ptrs) - 1; k >= 0; k-- { // collected backwards
			p := ptrs[k]
			if p < lo || p >= maps[i].End {
				return nil
			}
			s := stack[p-lo:]
			n := bytes.IndexByte(s[:min(len(s), maxArgString)], 0)
			if n < 0 {
				return nil
			}
			out = append(append(out, s[:n]...), 0)
		}
		return out
	}
	return str(args), str(env)
}
