package msvc

import "strings"

// llvmString decodes a string literal's encoded bytes as llvm-undname does
// (after "??_C@_0" or "??_C@_1"): the byte size, the CRC and the characters
// up to '@', the character width guessed from the trailing and embedded
// NULs, and writes it quoted with C escapes ("\"abc\"", "L\"w\"", and "..."
// after a truncated one).
func (p *parser) llvmString(wide bool) (*typ, error) {
	size, err := p.number()
	if err != nil {
		return nil, err
	}
	if size < 1 || wide && size < 2 {
		return nil, p.fail("bad string literal size")
	}
	if _, err := p.str(); err != nil { // the CRC
		return nil, err
	}
	if p.pos >= len(p.in) {
		return nil, p.fail("empty string literal")
	}
	var b strings.Builder
	truncated := false
	if wide {
		b.WriteString("L\"")
		var chars []uint32
		for !p.consume("@") {
			hi, err := p.charLiteral()
			if err != nil {
				return nil, err
			}
			lo, err := p.charLiteral()
			if err != nil {
				return nil, err
			}
			chars = append(chars, uint32(hi)<<8|uint32(lo))
			if len(chars) > 64 {
				return nil, p.fail("string literal too long")
			}
		}
		truncated = size > 64
		remaining := size
		for _, c := range chars {
			if remaining != 2 || truncated {
				escapeChar(&b, c)
			}
			remaining -= 2
		}
		_ = remaining
	} else {
		var bytes []byte
		for !p.consume("@") {
			if p.pos >= len(p.in) || len(bytes) >= 128 {
				return nil, p.fail("bad string literal")
			}
			c, err := p.charLiteral()
			if err != nil {
				return nil, err
			}
			bytes = append(bytes, c)
		}
		if int(size) > len(bytes) {
			truncated = true
		}
		width := guessWidth(bytes, int(size))
		switch width {
		case 2:
			b.WriteString("u\"")
		case 4:
			b.WriteString("U\"")
		default:
			b.WriteString("\"")
		}
		n := len(bytes) / width
		for i := 0; i < n; i++ {
			var c uint32
			for j := width - 1; j >= 0; j-- {
				c = c<<8 | uint32(bytes[i*width+j])
			}
			if i+1 < n || truncated {
				escapeChar(&b, c)
			}
		}
	}
	b.WriteByte('"')
	if truncated {
		b.WriteString("...")
	}
	return &typ{kind: tkString, lit: b.String()}, nil
}

func (p *parser) charLiteral() (byte, error) {
	c, err := p.get()
	if err != nil {
		return 0, err
	}
	if c != '?' {
		return c, nil
	}
	if c, err = p.get(); err != nil {
		return 0, err
	}
	switch {
	case c == '$':
		hi, err := p.get()
		if err != nil {
			return 0, err
		}
		lo, err := p.get()
		if err != nil {
			return 0, err
		}
		if hi < 'A' || hi > 'P' || lo < 'A' || lo > 'P' {
			return 0, p.fail("bad escaped character")
		}
		return (hi-'A')<<4 | (lo - 'A'), nil
	case c >= '0' && c <= '9':
		return ",/\\:. \n\t'-"[c-'0'], nil
	case c >= 'a' && c <= 'z':
		return 0xe1 + c - 'a', nil
	case c >= 'A' && c <= 'Z':
		return 0xc1 + c - 'A', nil
	}
	return 0, p.fail("bad escaped character")
}

func guessWidth(b []byte, size int) int {
	if size%2 == 1 {
		return 1
	}
	if size < 32 {
		trailing := 0
		for i := len(b) - 1; i >= 0 && b[i] == 0; i-- {
			trailing++
		}
		if trailing >= 4 && size%4 == 0 {
			return 4
		}
		if trailing >= 2 {
			return 2
		}
		return 1
	}
	nulls := 0
	for _, c := range b[:max(len(b)-1, 0)] {
		if c == 0 {
			nulls++
		}
	}
	n := len(b)
	if nulls >= 2*n/3 && size%4 == 0 {
		return 4
	}
	if nulls >= n/3 {
		return 2
	}
	return 1
}

func escapeChar(b *strings.Builder, c uint32) {
	switch c {
	case 0:
		b.WriteString(`\0`)
	case '\'':
		b.WriteString(`\'`)
	case '"':
		b.WriteString(`\"`)
	case '\\':
		b.WriteString(`\\`)
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if c > 0x1f && c < 0x7f {
			b.WriteByte(byte(c))
			return
		}
		var digits []byte
		for c != 0 {
			for i := 0; i < 2; i++ {
				digits = append(digits, "0123456789ABCDEF"[c%16])
				c /= 16
			}
		}
		b.WriteString(`\x`)
		for i := len(digits) - 1; i >= 0; i-- {
			b.WriteByte(digits[i])
		}
	}
}
