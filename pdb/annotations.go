package pdb

import "fmt"

// AnnotationOp is a binary annotation opcode of an inline site.
type AnnotationOp uint8

// Binary annotation opcodes.
const (
	BAInvalid                       AnnotationOp = 0
	BACodeOffset                    AnnotationOp = 1
	BAChangeCodeOffsetBase          AnnotationOp = 2
	BAChangeCodeOffset              AnnotationOp = 3
	BAChangeCodeLength              AnnotationOp = 4
	BAChangeFile                    AnnotationOp = 5
	BAChangeLineOffset              AnnotationOp = 6
	BAChangeLineEndDelta            AnnotationOp = 7
	BAChangeRangeKind               AnnotationOp = 8
	BAChangeColumnStart             AnnotationOp = 9
	BAChangeColumnEndDelta          AnnotationOp = 10
	BAChangeCodeOffsetAndLineOffset AnnotationOp = 11
	BAChangeCodeLengthAndCodeOffset AnnotationOp = 12
	BAChangeColumnEnd               AnnotationOp = 13
)

// Annotation is one decoded binary annotation: the opcode and its one or
// two operands (signed ones already decoded).
type Annotation struct {
	Op   AnnotationOp
	A, B int64
}

// DecodeAnnotations decodes the binary annotations of an inline site. It
// stops at the first BAInvalid (the padding at the end).
func DecodeAnnotations(p []byte) ([]Annotation, error) {
	var out []Annotation
	i := 0
	u := func() (uint32, error) {
		if i >= len(p) {
			return 0, fmt.Errorf("binary annotations: truncated at %d: %w", i, ErrFormat)
		}
		b0 := p[i]
		switch {
		case b0&0x80 == 0:
			i++
			return uint32(b0), nil
		case b0&0xC0 == 0x80:
			if i+2 > len(p) {
				break
			}
			v := uint32(b0&0x3f)<<8 | uint32(p[i+1])
			i += 2
			return v, nil
		case b0&0xE0 == 0xC0:
			if i+4 > len(p) {
				break
			}
			v := uint32(b0&0x1f)<<24 | uint32(p[i+1])<<16 | uint32(p[i+2])<<8 | uint32(p[i+3])
			i += 4
			return v, nil
		default:
			return 0, fmt.Errorf("binary annotations: bad compressed number %#x at %d: %w", b0, i, ErrFormat)
		}
		return 0, fmt.Errorf("binary annotations: truncated at %d: %w", i, ErrFormat)
	}
	signed := func(v uint32) int64 {
		if v&1 != 0 {
			return -int64(v >> 1)
		}
		return int64(v >> 1)
	}
	for i < len(p) {
		op, err := u()
		if err != nil {
			return out, err
		}
		a := Annotation{Op: AnnotationOp(op)}
		var v, w uint32
		switch a.Op {
		case BAInvalid:
			return out, nil
		case BACodeOffset, BAChangeCodeOffsetBase, BAChangeCodeOffset, BAChangeCodeLength, BAChangeFile,
			BAChangeRangeKind, BAChangeColumnStart, BAChangeColumnEnd:
			v, err = u()
			a.A = int64(v)
		case BAChangeLineOffset, BAChangeLineEndDelta, BAChangeColumnEndDelta:
			v, err = u()
			a.A = signed(v)
		case BAChangeCodeOffsetAndLineOffset:
			v, err = u()
			a.A = int64(v & 0xf)
			a.B = signed(v >> 4)
		case BAChangeCodeLengthAndCodeOffset:
			v, err = u()
			if err == nil {
				w, err = u()
			}
			a.A, a.B = int64(v), int64(w)
		default:
			return out, fmt.Errorf("binary annotations: opcode %d: %w", op, ErrFormat)
		}
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}
