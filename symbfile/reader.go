package symbfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("symbfile: malformed file")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// Reader reads a symbfile's records in order.
type Reader struct {
	r       *bufio.Reader
	off     int64 // offset of the next record
	started bool
	header  bool
	strings []string
	addr    uint64 // address of the previous range or return pad
	buf     bytes.Buffer
}

// NewReader returns a Reader of the symbfile r holds (uncompressed).
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// Next returns the next Range (*Range) or return pad (*ReturnPad), applying
// string tables and skipping messages of unknown types; io.EOF at the end.
// The returned record is the caller's.
func (r *Reader) Next() (any, error) {
	if !r.started {
		r.started = true
		var m [len(Magic)]byte
		if _, err := io.ReadFull(r.r, m[:]); err != nil || string(m[:]) != Magic {
			return nil, formatErr("no %q magic", Magic)
		}
		r.off = int64(len(Magic))
	}
	for {
		at := r.off
		n, err := r.uvarint()
		if err == io.EOF {
			if !r.header {
				return nil, formatErr("no header message")
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("record at offset %d: length: %w", at, err)
		}
		typ, err := r.uvarint()
		if err != nil {
			return nil, fmt.Errorf("record at offset %d: type: %w", at, unexpected(err))
		}
		r.buf.Reset()
		got, err := io.CopyN(&r.buf, r.r, int64(min(n, math.MaxInt64)))
		r.off += got
		if err != nil {
			return nil, fmt.Errorf("record at offset %d: %d-byte message: %w", at, n, unexpected(err))
		}
		msg := r.buf.Bytes()
		if !r.header && MessageType(typ) != TypeHeader {
			return nil, formatErr("record at offset %d: type %d before the header", at, typ)
		}
		switch MessageType(typ) {
		case TypeHeader:
			if r.header {
				return nil, formatErr("record at offset %d: a second header", at)
			}
			r.header = true
		case TypeStringTable:
			st, err := parseStringTable(msg)
			if err != nil {
				return nil, fmt.Errorf("record at offset %d: string table: %w", at, err)
			}
			r.strings = st
		case TypeRange:
			rg, err := r.parseRange(msg)
			if err != nil {
				return nil, fmt.Errorf("record at offset %d: range: %w", at, err)
			}
			return rg, nil
		case TypeReturnPad:
			rp, err := r.parseReturnPad(msg)
			if err != nil {
				return nil, fmt.Errorf("record at offset %d: return pad: %w", at, err)
			}
			return rp, nil
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return formatErr("truncated")
	}
	return err
}

func (r *Reader) uvarint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		b, err := r.r.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				return 0, formatErr("truncated varint")
			}
			return 0, err
		}
		r.off++
		if i == 9 && b > 1 {
			return 0, formatErr("varint overflows 64 bits")
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
}

// fields calls f for each field of a protobuf message.
func fields(msg []byte, f func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return formatErr("bad tag: %v", protowire.ParseError(n))
		}
		msg = msg[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(msg)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return formatErr("field %d: %v", num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if err := f(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// repeated appends the values of a repeated uint32 field, packed or not.
func repeated(dst []uint32, typ protowire.Type, v uint64, b []byte) ([]uint32, error) {
	switch typ {
	case protowire.VarintType:
		return append(dst, uint32(v)), nil
	case protowire.BytesType:
		for len(b) > 0 {
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, formatErr("packed field: %v", protowire.ParseError(n))
			}
			dst, b = append(dst, uint32(x)), b[n:]
		}
		return dst, nil
	}
	return dst, formatErr("repeated field of wire type %d", typ)
}

func parseStringTable(msg []byte) ([]string, error) {
	var out []string
	err := fields(msg, func(num protowire.Number, typ protowire.Type, _ uint64, b []byte) error {
		if num == 1 && typ == protowire.BytesType {
			out = append(out, string(b))
		}
		return nil
	})
	return out, err
}

func (r *Reader) str(ref uint64) (string, error) {
	if ref >= uint64(len(r.strings)) {
		return "", formatErr("string reference %d beyond the table's %d strings", ref, len(r.strings))
	}
	return r.strings[ref], nil
}

func (r *Reader) parseRange(msg []byte) (*Range, error) {
	rg := &Range{}
	addr := r.addr
	var offsets, lines []uint32
	err := fields(msg, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		var err error
		switch num {
		case 1:
			addr = r.addr + uint64(protowire.DecodeZigZag(v))
		case 12:
			addr = v
		case 2:
			rg.Length = v
		case 3:
			rg.Func = string(b)
		case 9:
			rg.Func, err = r.str(v)
		case 4:
			rg.File = string(b)
		case 10:
			rg.File, err = r.str(v)
		case 5:
			rg.CallLine = uint32(v)
		case 6:
			rg.CallFile = string(b)
		case 11:
			rg.CallFile, err = r.str(v)
		case 7:
			rg.Depth = uint32(v)
		case 8:
			if typ != protowire.BytesType {
				return formatErr("line table of wire type %d", typ)
			}
			return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
				var err error
				switch num {
				case 1:
					offsets, err = repeated(offsets, typ, v, b)
				case 2:
					lines, err = repeated(lines, typ, v, b)
				}
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(offsets) != len(lines) {
		return nil, formatErr("line table with %d offsets and %d lines", len(offsets), len(lines))
	}
	rg.Start = addr
	r.addr = addr
	if len(offsets) > 0 {
		rg.Lines = make([]LineEntry, len(offsets))
		a := addr
		for i, o := range offsets {
			a += uint64(o)
			rg.Lines[i] = LineEntry{a, lines[i]}
		}
	}
	return rg, nil
}

func (r *Reader) parseReturnPad(msg []byte) (*ReturnPad, error) {
	addr := r.addr
	var funcs, files, lines []uint32
	err := fields(msg, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		var err error
		switch num {
		case 1:
			addr = r.addr + uint64(protowire.DecodeZigZag(v))
		case 5:
			addr = v
		case 2:
			funcs, err = repeated(funcs, typ, v, b)
		case 3:
			files, err = repeated(files, typ, v, b)
		case 4:
			lines, err = repeated(lines, typ, v, b)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(funcs) != len(files) || len(funcs) != len(lines) {
		return nil, formatErr("%d functions, %d files and %d lines", len(funcs), len(files), len(lines))
	}
	r.addr = addr
	rp := &ReturnPad{Addr: addr, Frames: make([]PadFrame, len(funcs))}
	for i := range funcs {
		fn, err := r.str(uint64(funcs[i]))
		if err != nil {
			return nil, err
		}
		file, err := r.str(uint64(files[i]))
		if err != nil {
			return nil, err
		}
		rp.Frames[i] = PadFrame{fn, file, lines[i]}
	}
	return rp, nil
}
