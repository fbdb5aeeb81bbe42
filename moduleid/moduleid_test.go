package moduleid

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

// rsdsRecord builds an RSDS record the way a linker writes one.
func rsdsRecord(g GUID, age uint32, name string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, SignatureRSDS)
	b = binary.LittleEndian.AppendUint32(b, g.Data1)
	b = binary.LittleEndian.AppendUint16(b, g.Data2)
	b = binary.LittleEndian.AppendUint16(b, g.Data3)
	b = append(b, g.Data4[:]...)
	b = binary.LittleEndian.AppendUint32(b, age)
	return append(append(b, name...), 0)
}

// TestPEVectors checks the identifiers Breakpad's minidump_dump printed for
// the first module of its test dump minidump2.dmp
// (corpus breakpad/processor/minidump2.dump.out): RSDS
// 5a9832e5-2872-41c1-838e-d98914e9b7ff age 1, time stamp 0x45d35f6c, image
// size 0x2d000.
func TestPEVectors(t *testing.T) {
	g := GUID{0x5a9832e5, 0x2872, 0x41c1, [8]byte{0x83, 0x8e, 0xd9, 0x89, 0x14, 0xe9, 0xb7, 0xff}}
	rec := rsdsRecord(g, 1, `c:\test_app.pdb`)
	r, ok := ParseRSDS(rec)
	if !ok || r.GUID != g || r.Age != 1 || r.PDBFileName != `c:\test_app.pdb` {
		t.Fatalf("ParseRSDS = %+v, %v", r, ok)
	}
	if got, want := r.DebugID(), "5A9832E5287241C1838ED98914E9B7FF1"; got != want {
		t.Errorf("DebugID = %s, want %s", got, want)
	}
	if got, want := PECodeID(0x45d35f6c, 0x2d000), "45D35F6C2d000"; got != want {
		t.Errorf("PECodeID = %s, want %s", got, want)
	}
	// The second module (ntdll): age 2.
	g2 := GUID{0x36515fb5, 0xd043, 0x45e4, [8]byte{0x91, 0xf6, 0x72, 0xfa, 0x2e, 0x28, 0x78, 0xc0}}
	if got, want := DebugID(g2, 2), "36515FB5D04345E491F672FA2E2878C02"; got != want {
		t.Errorf("DebugID = %s, want %s", got, want)
	}
	if got, want := PECodeID(0x411096b4, 0xb0000), "411096B4b0000"; got != want {
		t.Errorf("PECodeID = %s, want %s", got, want)
	}
	// Ages above 9 stay lower-case and unpadded.
	if got := DebugID(g, 0x1a); !strings.HasSuffix(got, "FF1a") {
		t.Errorf("DebugID with age 0x1a = %s", got)
	}

	nb := binary.LittleEndian.AppendUint32(nil, SignatureNB10)
	for _, v := range []uint32{0, 0x3c1a2b4d, 0xb} {
		nb = binary.LittleEndian.AppendUint32(nb, v)
	}
	nb = append(nb, "x.pdb\x00"...)
	n, ok := ParseNB10(nb)
	if !ok || n.Signature != 0x3c1a2b4d || n.Age != 0xb || n.PDBFileName != "x.pdb" {
		t.Fatalf("ParseNB10 = %+v, %v", n, ok)
	}
	if got, want := n.DebugID(), "3C1A2B4Db"; got != want {
		t.Errorf("NB10 DebugID = %s, want %s", got, want)
	}
	if _, ok := ParseRSDS(nb); ok {
		t.Error("ParseRSDS accepted an NB10 record")
	}
	if _, ok := ParseNB10(rec); ok {
		t.Error("ParseNB10 accepted an RSDS record")
	}
	if _, ok := ParseRSDS(rec[:23]); ok {
		t.Error("ParseRSDS accepted 23 bytes")
	}
	if r, ok := ParseRSDS(rec[:24]); !ok || r.PDBFileName != "" {
		t.Errorf("ParseRSDS without a name = %+v, %v", r, ok)
	}
}

// TestELFVectors checks deep_chain-x64-O0 of the corpus (generated/): build
// ID 485d6e5a…3500, filed by Breakpad's dump_syms under
// 5A6E5D48B112F8756FDC024A45F537C30 with INFO CODE_ID
// 485D6E5A12B175F86FDC024A45F537C3299E3500.
func TestELFVectors(t *testing.T) {
	id, _ := hex.DecodeString("485d6e5a12b175f86fdc024a45f537c3299e3500")
	if got, want := ELFDebugID(id), "5A6E5D48B112F8756FDC024A45F537C30"; got != want {
		t.Errorf("ELFDebugID = %s, want %s", got, want)
	}
	if got, want := ELFCodeID(id), "485d6e5a12b175f86fdc024a45f537c3299e3500"; got != want {
		t.Errorf("ELFCodeID = %s, want %s", got, want)
	}
	if got, want := ELFDebugID(nil), "000000000000000000000000000000000"; got != want {
		t.Errorf("ELFDebugID(nil) = %s, want %s", got, want)
	}
}

// FuzzCodeView checks that the CodeView parsers never panic, accept only
// their own signature and keep the file name within the record.
func FuzzCodeView(f *testing.F) {
	f.Add(rsdsRecord(GUID{1, 2, 3, [8]byte{4}}, 5, "a.pdb"))
	f.Add([]byte("NB10\x00\x00\x00\x00\x01\x02\x03\x04\x05\x00\x00\x00b.pdb\x00"))
	f.Add([]byte("RSDS"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, ok := ParseRSDS(b); ok {
			if len(b) < 24 || string(b[:4]) != "RSDS" || len(r.PDBFileName) > len(b)-24 || strings.IndexByte(r.PDBFileName, 0) >= 0 {
				t.Fatalf("ParseRSDS(% x) = %+v", b, r)
			}
			if id := r.DebugID(); len(id) < 33 {
				t.Fatalf("DebugID %q too short", id)
			}
		}
		if r, ok := ParseNB10(b); ok {
			if len(b) < 16 || string(b[:4]) != "NB10" || len(r.PDBFileName) > len(b)-16 {
				t.Fatalf("ParseNB10(% x) = %+v", b, r)
			}
		}
		if id := ELFDebugID(b); len(id) != 33 {
			t.Fatalf("ELFDebugID length %d", len(id))
		}
	})
}
