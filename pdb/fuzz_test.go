package pdb

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// walkSymbols parses every record an iterator yields with its kind's
// parser.
func walkSymbols(it *SymbolIter) {
	for {
		s, ok := it.Next()
		if !ok {
			return
		}
		switch {
		case s.Kind.IsProc():
			ParseProc(s.Data)
		case s.Kind == S_THUNK32:
			ParseThunk(s.Data)
		case s.Kind == S_BLOCK32:
			ParseBlock(s.Data)
		case s.Kind == S_SEPCODE:
			ParseSepCode(s.Data)
		case s.Kind == S_PUB32:
			ParsePub(s.Data)
		case s.Kind == S_PROCREF || s.Kind == S_LPROCREF || s.Kind == S_DATAREF:
			ParseRef(s.Data)
		case s.Kind == S_FRAMEPROC:
			ParseFrameProc(s.Data)
		case s.Kind == S_INLINESITE || s.Kind == S_INLINESITE2:
			if in, err := ParseInlineSite(s.Kind, s.Data); err == nil {
				DecodeAnnotations(in.Annotations)
			}
		}
	}
}

func exerciseC13(data []byte) {
	subs, _ := ParseSubsections(data)
	for _, s := range subs {
		switch s.Kind {
		case DEBUG_S_LINES:
			ParseLines(s.Data)
		case DEBUG_S_FILECHKSMS:
			ParseFileChecksums(s.Data)
		case DEBUG_S_INLINEELINES:
			ParseInlineeLines(s.Data)
		case DEBUG_S_FRAMEDATA:
			ParseFrameDataSubsection(s.Data)
		case DEBUG_S_CROSSSCOPEIMPORTS:
			ParseCrossScopeImports(s.Data)
		case DEBUG_S_CROSSSCOPEEXPORTS:
			if e, err := ParseCrossScopeExports(s.Data); err == nil {
				ExportedIndex(e, 0x80000001)
			}
		}
	}
}

func symRecord(kind SymKind, body []byte) []byte {
	b := binary.LittleEndian.AppendUint16(nil, uint16(len(body)+2))
	b = binary.LittleEndian.AppendUint16(b, uint16(kind))
	return append(b, body...)
}

func FuzzSymbols(f *testing.F) {
	proc := make([]byte, 35)
	copy(proc[35-4:], "main")
	f.Add(append(symRecord(S_GPROC32, append(proc, 0)), symRecord(S_INLINESITE, []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0x10, 0, 0, 3, 4, 0x0b, 0x21, 0})...))
	f.Add(symRecord(S_PUB32, []byte{2, 0, 0, 0, 0x10, 0, 0, 0, 1, 0, '_', 'f', '@', '8', 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		walkSymbols(NewSymbolIter(data, 4))
		exerciseC13(data)
		DecodeAnnotations(data)
	})
}

func FuzzTypes(f *testing.F) {
	hdr := make([]byte, 56)
	le := binary.LittleEndian
	le.PutUint32(hdr[0:], 20040203)
	le.PutUint32(hdr[4:], 56)
	le.PutUint32(hdr[8:], 0x1000)
	le.PutUint32(hdr[12:], 0x1002)
	rec := func(k LeafKind, body []byte) []byte {
		b := le.AppendUint16(nil, uint16(len(body)+2))
		b = le.AppendUint16(b, uint16(k))
		return append(b, body...)
	}
	recs := append(rec(LF_ARGLIST, []byte{1, 0, 0, 0, 0x74, 0, 0, 0}), rec(LF_PROCEDURE, []byte{3, 0, 0, 0, 0, 0, 1, 0, 0, 0x10, 0, 0})...)
	le.PutUint32(hdr[16:], uint32(len(recs)))
	f.Add(append(hdr, recs...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseTypeStream(data)
		// The same stream in pieces (a file in memory whose blocks are
		// not consecutive) reads the same.
		n := 1
		if len(data) > 0 {
			n += int(data[len(data)-1]) % 61
		}
		ts2, err2 := parseTypeStream(splitPieces(data, n))
		if (err == nil) != (err2 == nil) {
			t.Fatalf("in one piece: %v; in pieces of %d: %v", err, n, err2)
		}
		if err != nil {
			return
		}
		if ts.Len() != ts2.Len() {
			t.Fatalf("%d records in one piece, %d in pieces of %d", ts.Len(), ts2.Len(), n)
		}
		for i := range ts.Len() {
			k1, d1, _ := ts.Record(ts.Header.IndexBegin + TypeIndex(i))
			k2, d2, _ := ts2.Record(ts.Header.IndexBegin + TypeIndex(i))
			if k1 != k2 || !bytes.Equal(d1, d2) {
				t.Fatalf("record %d differs in pieces of %d", i, n)
			}
		}
		for i := 0; i < ts.Len() && i < 1000; i++ {
			k, p, err := ts.Record(ts.Header.IndexBegin + TypeIndex(i))
			if err != nil {
				t.Fatalf("record %d of %d: %v", i, ts.Len(), err)
			}
			switch k {
			case LF_MODIFIER:
				ParseModifier(p)
			case LF_POINTER:
				ParsePointer(p)
			case LF_PROCEDURE:
				ParseProcedure(p)
			case LF_MFUNCTION:
				ParseMemberFunction(p)
			case LF_ARGLIST, LF_SUBSTR_LIST:
				ParseArgList(p)
			case LF_ARRAY:
				ParseArray(p)
			case LF_CLASS, LF_STRUCTURE, LF_UNION, LF_ENUM, LF_INTERFACE:
				ParseClass(k, p)
			case LF_FUNC_ID:
				ParseFuncID(p)
			case LF_MFUNC_ID:
				ParseMFuncID(p)
			case LF_STRING_ID:
				ParseStringID(p)
			}
		}
	})
}

// TestTypeStreamCounts: a header claiming 2^32-ish records in a small
// stream is an error, not an allocation.
func TestTypeStreamCounts(t *testing.T) {
	hdr := make([]byte, 56)
	le := binary.LittleEndian
	le.PutUint32(hdr[4:], 56)
	le.PutUint32(hdr[8:], 0x1000)
	le.PutUint32(hdr[12:], 0xffffffff)
	if _, err := ParseTypeStream(hdr); err == nil {
		t.Error("2^32 records in 0 bytes: no error")
	}
	if _, err := ParseArgList([]byte{0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("LF_ARGLIST of 2^32-1 arguments: no error")
	}
	if _, err := ParseInlineeLines([]byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("2^32-1 extra files: no error")
	}
}
