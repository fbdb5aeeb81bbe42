package cfi

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// refEvaluator is a literal transcription of Breakpad's PostfixEvaluator
// (a stack of strings, a dictionary of names) used as the oracle of the
// fuzz target: the compiled programs must agree with it on every input.
// It shares no code with the package beyond the Memory interface.
type refEvaluator struct {
	size     int
	dict     map[string]uint64
	assigned map[string]bool
	mem      Memory
	stack    []string
}

func (r *refEvaluator) mask(v uint64) uint64 {
	if r.size == 4 {
		return v & 0xffffffff
	}
	return v
}

// literal is PopValueOrIdentifier's test: a leading '-', then what
// istringstream >> unsigned accepts (one sign, decimal digits, in range),
// with nothing left over.
func (r *refEvaluator) literal(tok string) (uint64, bool) {
	neg := false
	if strings.HasPrefix(tok, "-") {
		neg, tok = true, tok[1:]
	}
	if strings.HasPrefix(tok, "+") {
		tok = tok[1:]
	} else if strings.HasPrefix(tok, "-") {
		neg, tok = !neg, tok[1:]
	}
	if tok == "" || tok[0] < '0' || tok[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(tok, 10, 8*r.size)
	if err != nil {
		return 0, false
	}
	if neg {
		v = r.mask(-v)
	}
	return v, true
}

func (r *refEvaluator) pop() (string, bool) {
	if len(r.stack) == 0 {
		return "", false
	}
	t := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	return t, true
}

func (r *refEvaluator) popValue() (uint64, bool) {
	t, ok := r.pop()
	if !ok {
		return 0, false
	}
	if v, ok := r.literal(t); ok {
		return v, true
	}
	v, ok := r.dict[t]
	return v, ok
}

func (r *refEvaluator) push(v uint64) { r.stack = append(r.stack, strconv.FormatUint(v, 10)) }

func (r *refEvaluator) token(tok string) bool {
	switch tok {
	case "+", "-", "*", "/", "%", "@":
		b, ok := r.popValue()
		if !ok {
			return false
		}
		a, ok := r.popValue()
		if !ok {
			return false
		}
		var v uint64
		switch tok {
		case "+":
			v = a + b
		case "-":
			v = a - b
		case "*":
			v = a * b
		case "/", "%":
			if b == 0 {
				return false // undefined behavior in Breakpad
			}
			if tok == "/" {
				v = a / b
			} else {
				v = a % b
			}
		case "@":
			v = a & (r.mask(^uint64(0)) ^ r.mask(b-1))
		}
		r.push(r.mask(v))
	case "^":
		a, ok := r.popValue()
		if !ok || r.mem == nil {
			return false
		}
		b, err := r.mem.ReadMemory(a, r.size)
		if err != nil || len(b) < r.size {
			return false
		}
		if r.size == 4 {
			r.push(uint64(binary.LittleEndian.Uint32(b)))
		} else {
			r.push(binary.LittleEndian.Uint64(b))
		}
	case "=":
		v, ok := r.popValue()
		if !ok {
			return false
		}
		id, ok := r.pop()
		if !ok {
			return false
		}
		if _, isLit := r.literal(id); isLit || !strings.HasPrefix(id, "$") {
			return false
		}
		r.dict[id] = v
		r.assigned[id] = true
	default:
		r.stack = append(r.stack, tok)
	}
	return true
}

// run is EvaluateInternal: split on C white space, split a glued "=".
func (r *refEvaluator) run(expr string) bool {
	r.stack = r.stack[:0]
	for _, tok := range strings.FieldsFunc(expr, func(c rune) bool { return c < 0x80 && isSpace(byte(c)) }) {
		if len(tok) > 1 && tok[0] == '=' {
			if !r.token("=") || !r.token(tok[1:]) {
				return false
			}
		} else if !r.token(tok) {
			return false
		}
	}
	return true
}

// evaluate is Evaluate.
func (r *refEvaluator) evaluate(expr string) bool { return r.run(expr) && len(r.stack) == 0 }

// evaluateForValue is EvaluateForValue.
func (r *refEvaluator) evaluateForValue(expr string) (uint64, bool) {
	if !r.run(expr) || len(r.stack) != 1 {
		return 0, false
	}
	return r.popValue()
}

// refParseRules is CFIRuleParser::Parse into the rules in force
// (CFIFrameInfo's setters): it reports false where Breakpad's parser does.
func refParseRules(text string, rules map[string]string) bool {
	var name, expr string
	report := func() bool {
		if name == "" || expr == "" {
			return false
		}
		rules[name] = expr
		return true
	}
	for _, tok := range strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }) {
		if strings.HasSuffix(tok, ":") {
			if len(tok) < 2 {
				return false
			}
			if name != "" || expr != "" {
				if !report() {
					return false
				}
			}
			name, expr = tok[:len(tok)-1], ""
		} else {
			if expr != "" {
				expr += " "
			}
			expr += tok
		}
	}
	return report()
}

// refFindCallerRegs is CFIFrameInfo::FindCallerRegs.
func refFindCallerRegs(size int, rules map[string]string, regs map[string]uint64, mem Memory) (caller map[string]uint64, ok bool) {
	cfaRule, raRule := rules[".cfa"], rules[".ra"]
	if cfaRule == "" || raRule == "" {
		return nil, false
	}
	working := func(withCFA bool, cfa uint64) *refEvaluator {
		r := &refEvaluator{size: size, dict: map[string]uint64{}, assigned: map[string]bool{}, mem: mem}
		for k, v := range regs {
			r.dict[k] = v
		}
		if withCFA {
			r.dict[".cfa"] = cfa
		}
		return r
	}
	cfa, ok := working(false, 0).evaluateForValue(cfaRule)
	if !ok {
		return nil, false
	}
	ra, ok := working(true, cfa).evaluateForValue(raRule)
	if !ok {
		return nil, false
	}
	caller = map[string]uint64{".cfa": cfa, ".ra": ra}
	for name, rule := range rules {
		if name == ".cfa" || name == ".ra" {
			continue
		}
		if v, ok := working(true, cfa).evaluateForValue(rule); ok {
			caller[name] = v
		}
	}
	return caller, true
}
