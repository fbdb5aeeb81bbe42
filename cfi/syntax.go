package cfi

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The postfix language is tokenized on white space only, as Breakpad's
// evaluator does (istringstream >> string): "8+" is one identifier, not a
// number and an operator. The lexer rules below therefore classify whole
// white-space separated words. Go's regexp has no look-ahead, so a word that
// must end at white space consumes one trailing white-space character (or the
// end of the text); that character is trimmed from the captured value.
const (
	space   = `[ \t\n\v\f\r]`
	wordEnd = `(?:` + space + `|$)`
)

// wordRules are the tokens of a postfix expression, tried in order.
var wordRules = []lexer.SimpleRule{
	{Name: "Space", Pattern: space + `+`},
	// A lone operator word.
	{Name: "Op", Pattern: `[-+*/%@^=]` + wordEnd},
	// "=" glued to the next word ("=$eip"), as MSVC 2010 writes in LTO
	// mode; Breakpad splits it into "=" and the rest of the word.
	{Name: "Glued", Pattern: `=[^ \t\n\v\f\r]+`},
	// A decimal literal: Breakpad strips one leading '-' and then reads the
	// rest with a C++ stream, which accepts one more sign.
	{Name: "Number", Pattern: `-?[-+]?[0-9]+` + wordEnd},
	// Anything else is an identifier: a register, a $-variable or a
	// pseudo-value such as .cfa or .raSearch.
	{Name: "Ident", Pattern: `[^ \t\n\v\f\r]+`},
}

// ruleSetRules are the tokens of a STACK CFI rule set: a word ending in ':'
// names the register whose rule the following words give.
var ruleSetRules = append([]lexer.SimpleRule{
	{Name: "Space", Pattern: space + `+`},
	{Name: "Name", Pattern: `[^ \t\n\v\f\r]*:` + wordEnd},
}, wordRules[1:]...)

// wordAST is one word of a postfix expression.
type wordAST struct {
	Op     string `parser:"@Op"`
	Glued  string `parser:"| @Glued"`
	Number string `parser:"| @Number"`
	Ident  string `parser:"| @Ident"`
}

// exprAST is a postfix expression or STACK WIN program string.
type exprAST struct {
	Words []wordAST `parser:"@@*"`
}

// ruleAST is one "REG: EXPR" rule of a STACK CFI rule set.
type ruleAST struct {
	Name  string    `parser:"@Name"`
	Words []wordAST `parser:"@@*"`
}

// ruleSetAST is the rule text of one STACK CFI line. Stray holds words that
// precede the first register name, which make the rule set malformed.
type ruleSetAST struct {
	Stray []wordAST `parser:"@@*"`
	Rules []ruleAST `parser:"@@*"`
}

var (
	exprParser = participle.MustBuild[exprAST](
		participle.Lexer(lexer.MustSimple(wordRules)),
		participle.Elide("Space"))
	ruleSetParser = participle.MustBuild[ruleSetAST](
		participle.Lexer(lexer.MustSimple(ruleSetRules)),
		participle.Elide("Space"))
)

// token kinds of a classified word.
const (
	tokOp = iota
	tokNumber
	tokIdent
)

type token struct {
	kind int
	text string
}

func trimSpace(s string) string { return strings.TrimRight(s, " \t\n\v\f\r") }

// tokens flattens parsed words into tokens, splitting a glued "=word" into
// "=" and the word. Breakpad evaluates the rest of a glued word as one
// token: "==$x" is "=" followed by the identifier "=$x".
func tokens(words []wordAST) []token {
	out := make([]token, 0, len(words)+2)
	for _, w := range words {
		switch {
		case w.Op != "":
			out = append(out, token{tokOp, trimSpace(w.Op)})
		case w.Glued != "":
			out = append(out, token{tokOp, "="}, classify(w.Glued[1:]))
		case w.Number != "":
			out = append(out, token{tokNumber, trimSpace(w.Number)})
		default:
			out = append(out, token{tokIdent, w.Ident})
		}
	}
	return out
}

// classify classifies the rest of a glued word without the lexer, since
// Breakpad does not split it any further.
func classify(s string) token {
	if len(s) == 1 && strings.ContainsRune("+-*/%@^=", rune(s[0])) {
		return token{tokOp, s}
	}
	if _, ok := parseLiteral(s, ^uint64(0)); ok {
		return token{tokNumber, s}
	}
	return token{tokIdent, s}
}

// parseLiteral reads a decimal literal as Breakpad does: an optional '-'
// that negates, then what a C++ stream extracts into an unsigned integer of
// the address size (one optional sign, decimal digits, no overflow). mask is
// the all-ones value of the address size. ok is false when s is not a
// literal of that size, in which case Breakpad treats it as an identifier.
func parseLiteral(s string, mask uint64) (v uint64, ok bool) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			neg = !neg
		}
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (mask-d)/10 {
			return 0, false // overflow: the stream extraction fails
		}
		v = v*10 + d
	}
	if neg {
		v = -v & mask
	}
	return v, true
}

// parseExpr tokenizes a postfix expression or program string.
func parseExpr(text string) ([]token, error) {
	ast, err := exprParser.ParseString("", text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return tokens(ast.Words), nil
}

// parsedRule is one rule of a STACK CFI rule set: the register's name and
// the tokens of its expression.
type parsedRule struct {
	name string
	expr []token
	text string // the expression's words joined by single spaces
}

// parseRuleSet splits STACK CFI rule text into rules, rejecting what
// Breakpad's CFIRuleParser rejects: words before the first name, an empty
// name, a name without an expression, and empty text.
func parseRuleSet(text string) ([]parsedRule, error) {
	ast, err := ruleSetParser.ParseString("", text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if len(ast.Stray) > 0 {
		return nil, fmt.Errorf("%w: expression %q before the first register name", ErrSyntax, joinWords(ast.Stray))
	}
	if len(ast.Rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ErrSyntax)
	}
	rules := make([]parsedRule, len(ast.Rules))
	for i, r := range ast.Rules {
		name := strings.TrimSuffix(trimSpace(r.Name), ":")
		if name == "" {
			return nil, fmt.Errorf("%w: rule %d: empty register name", ErrSyntax, i)
		}
		if len(r.Words) == 0 {
			return nil, fmt.Errorf("%w: rule %d (%s): empty expression", ErrSyntax, i, name)
		}
		rules[i] = parsedRule{name: name, expr: tokens(r.Words), text: joinWords(r.Words)}
	}
	return rules, nil
}

func joinWords(words []wordAST) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(trimSpace(w.Op + w.Glued + w.Number + w.Ident))
	}
	return b.String()
}
