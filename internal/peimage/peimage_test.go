package peimage

import (
	"bytes"
	"debug/pe"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestImage(t *testing.T) {
	f, err := pe.Open(corpus.File(t, "windows/mozilla/basic64.dll"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := New(f)
	for _, s := range f.Sections {
		data, err := s.Data()
		if err != nil || len(data) < 16 {
			continue
		}
		got, err := m.Slice(s.VirtualAddress+8, 8)
		if err != nil || !bytes.Equal(got, data[8:16]) {
			t.Errorf("section %s: Slice = %x, %v; want %x", s.Name, got, err, data[8:16])
		}
		rest, err := m.Rest(s.VirtualAddress + 8)
		if err != nil || len(rest) != len(data)-8 {
			t.Errorf("section %s: Rest gave %d bytes, %v; want %d", s.Name, len(rest), err, len(data)-8)
		}
		if _, err := m.Slice(s.VirtualAddress, uint32(len(data))+1); err == nil {
			t.Errorf("section %s: a slice past its end", s.Name)
		}
	}
	if _, err := m.Rest(0xfffffff0); err == nil {
		t.Error("an address in no section")
	}
}
