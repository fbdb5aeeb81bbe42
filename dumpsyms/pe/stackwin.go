package pe

import (
	"slices"

	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Frame types of STACK WIN records (the FPO_DATA cbFrame values, and 4
// for FrameData program strings).
const (
	frameFPO       = 0
	frameFrameData = 4
)

// stackWin writes the x86 frame data: STACK WIN 4 from the FrameData
// stream, then STACK WIN 0 from the FPO stream, as Breakpad's
// PrintFrameDataUsingPDB enumerates them; consecutive records with the
// same type, address, code size and prolog size are written once, and
// with OMAP the prolog and the body are mapped apart.
func (d *dumper) stackWin() {
	type rec struct {
		typ                                     uint32
		rva, code, prolog, params, saved, local uint32
		maxStack                                uint32
		program                                 string
		hasProgram, usesBP                      bool
	}
	var recs []rec
	if b, err := d.f.DebugStream(pdb.DbgNewFPO); err != nil {
		d.damage("frame data", "frame data: %v", err)
	} else if b != nil {
		fd, err := pdb.ParseFrameData(b)
		if err != nil {
			d.damage("frame data", "frame data: %v", err)
		}
		// Program strings are shared (/names holds each once): one Go
		// string per offset.
		programs := map[uint32]string{}
		recs = make([]rec, 0, len(fd))
		for _, f := range fd {
			r := rec{typ: frameFrameData, rva: f.RVAStart, code: f.CodeSize, prolog: uint32(f.PrologSize), params: f.ParamsSize,
				saved: uint32(f.SavedRegsSize), local: f.LocalSize, maxStack: f.MaxStackSize}
			if p, ok := programs[f.FrameFunc]; ok {
				r.program, r.hasProgram = p, true
			} else if p, err := d.names.String(f.FrameFunc); err == nil {
				if p == "" {
					d.inconsistent("frame data programs", "frame data at %#x: its program string (names offset %#x) is empty", f.RVAStart, f.FrameFunc)
				}
				programs[f.FrameFunc] = p
				r.program, r.hasProgram = p, true
			} else {
				d.damage("frame data", "frame data at %#x: %v", f.RVAStart, err)
			}
			recs = append(recs, r)
		}
	}
	if b, err := d.f.DebugStream(pdb.DbgFPO); err != nil {
		d.damage("FPO data", "fpo data: %v", err)
	} else if b != nil {
		fpo, err := pdb.ParseFPO(b)
		if err != nil {
			d.damage("FPO data", "fpo data: %v", err)
		}
		for _, f := range fpo {
			recs = append(recs, rec{typ: uint32(f.FrameType), rva: f.Start, code: f.ProcSize, prolog: uint32(f.Prolog),
				params: uint32(f.Params) * 4, saved: uint32(f.Regs) * 4, local: f.Locals * 4, usesBP: f.UseBP})
		}
	}
	d.syms.Wins = slices.Grow(d.syms.Wins, len(recs))
	lastType, lastRVA, lastCode, lastProlog := ^uint32(0), ^uint32(0), uint32(0), ^uint32(0)
	for _, r := range recs {
		if r.typ == lastType && r.rva == lastRVA && r.code == lastCode && r.prolog == lastProlog {
			continue
		}
		lastType, lastRVA, lastCode, lastProlog = r.typ, r.rva, r.code, r.prolog
		type piece struct{ rva, code, prolog uint32 }
		var pieces []piece
		if d.imap == nil {
			pieces = []piece{{r.rva, r.code, r.prolog}}
		} else {
			var pro []addrRange
			if r.prolog > 0 {
				pro = d.imap.mapRange(addrRange{r.rva, r.prolog})
			}
			body := d.imap.mapRange(addrRange{r.rva + r.prolog, r.code - r.prolog})
			if len(pro) == 1 && len(body) == 1 && pro[0].end() == body[0].rva {
				pieces = []piece{{pro[0].rva, pro[0].length + body[0].length, pro[0].length}}
			} else {
				for _, p := range pro {
					pieces = append(pieces, piece{p.rva, p.length, p.length})
				}
				for _, b := range body {
					pieces = append(pieces, piece{b.rva, b.length, 0})
				}
			}
		}
		for _, p := range pieces {
			d.syms.Wins = append(d.syms.Wins, symfile.StackWin{
				Type: symfile.WinType(r.typ), RVA: p.rva, CodeSize: p.code, PrologSize: p.prolog,
				ParamSize: r.params, SavedRegisterSize: r.saved, LocalSize: r.local, MaxStackSize: r.maxStack,
				HasProgramString: r.hasProgram, ProgramString: r.program, AllocatesBasePointer: r.usesBP,
			})
		}
	}
}
