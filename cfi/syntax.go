package cfi

import (
	"fmt"
	"strings"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// wordList is a run of expression words. Participle parses it through the
// Parseable interface, the whole run in one step: its generic repetition
// costs some ten allocations per word, which made compiling a long STACK
// WIN program string take hundreds of microseconds.
type wordList struct{ words []string }

// Parse implements participle.Parseable.
func (w *wordList) Parse(lex *lexer.PeekingLexer) error {
	if lex.Peek().Type != tokWord {
		return participle.NextMatch
	}
	for t := lex.Peek(); t.Type == tokWord; t = lex.Peek() {
		w.words = append(w.words, t.Value)
		lex.Next()
	}
	return nil
}

// exprAST is a postfix expression or STACK WIN program string.
type exprAST struct {
	Words wordList `parser:"@@?"`
}

// ruleAST is one "REG: EXPR" rule of a STACK CFI rule set. Its words may
// include blank ones (only \v, \f), which count for the rule parser but
// hold no tokens.
type ruleAST struct {
	Name  string   `parser:"@Name"`
	Words wordList `parser:"@@?"`
}

// ruleSetAST is the rule text of one STACK CFI line. Stray holds words that
// precede the first register name, which make the rule set malformed.
type ruleSetAST struct {
	Stray wordList  `parser:"@@?"`
	Rules []ruleAST `parser:"@@*"`
}

// The grammars are built on first use, not at package init: building them
// reflects over the AST types, work every program linking cfi would pay at
// start-up even when it never parses a rule (docs/performance.md).
var (
	exprParser = sync.OnceValue(func() *participle.Parser[exprAST] {
		return participle.MustBuild[exprAST](participle.Lexer(wordLexer{}))
	})
	ruleSetParser = sync.OnceValue(func() *participle.Parser[ruleSetAST] {
		return participle.MustBuild[ruleSetAST](participle.Lexer(wordLexer{names: true}))
	})
)

// token is a word as the evaluator sees it, with its class (wordOp,
// wordNumber or wordIdent; a glued word becomes two tokens).
type token struct {
	kind int
	text string
}

// tokens flattens parsed words into tokens, splitting a glued "=word" into
// "=" and the word. Breakpad evaluates the rest of a glued word as one
// token: "==$x" is "=" followed by the identifier "=$x".
func tokens(words []string) []token {
	out := make([]token, 0, len(words)+2)
	for _, w := range words {
		if strings.Trim(w, "\v\f") == "" {
			continue // a blank word of rule text
		}
		if classifyWord(w) == wordGlued {
			out = append(out, token{wordOp, "="}, tokenOf(w[1:]))
		} else {
			out = append(out, tokenOf(w))
		}
	}
	return out
}

// tokenOf classifies a word that is not split any further: a whole word
// other than a glued "=word", or the rest of a glued word.
func tokenOf(w string) token {
	if k := classifyWord(w); k != wordGlued {
		return token{k, w}
	}
	return token{wordIdent, w}
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

// MaxTextLen is the longest program or rule set text compiled: 16 bytes
// per token allowed (MaxTokens). Longer texts, and texts of more than
// MaxTokens words, are refused with ErrTooComplex before they are
// tokenized, since the tokenizer's memory grows with the text (10^7 tokens
// took 5.7 GB before the token limit applied).
const MaxTextLen = 16 * MaxTokens

// checkSize refuses a text too long or of too many words to compile, in
// one pass over its bytes without allocating. The error quotes only the
// text's start.
func checkSize(text string) error {
	if len(text) > MaxTextLen {
		return fmt.Errorf("%q...: %w: %d bytes, limit %d", text[:32], ErrTooComplex, len(text), MaxTextLen)
	}
	words, in := 0, false
	for i := 0; i < len(text); i++ {
		w := !isBreak(text[i])
		if w && !in {
			words++
		}
		in = w
	}
	if words > MaxTokens {
		return fmt.Errorf("%q...: %w: %d words, limit %d", text[:32], ErrTooComplex, words, MaxTokens)
	}
	return nil
}

// parseExpr tokenizes a postfix expression or program string.
func parseExpr(text string) ([]token, error) {
	ast, err := exprParser().ParseString("", text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return tokens(ast.Words.words), nil
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
	ast, err := ruleSetParser().ParseString("", text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if len(ast.Stray.words) > 0 {
		return nil, fmt.Errorf("%w: expression %q before the first register name", ErrSyntax, joinWords(ast.Stray.words))
	}
	if len(ast.Rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ErrSyntax)
	}
	rules := make([]parsedRule, len(ast.Rules))
	for i, r := range ast.Rules {
		if r.Name == "" {
			return nil, fmt.Errorf("%w: rule %d: empty register name", ErrSyntax, i)
		}
		if len(r.Words.words) == 0 {
			return nil, fmt.Errorf("%w: rule %d (%s): empty expression", ErrSyntax, i, r.Name)
		}
		rules[i] = parsedRule{name: r.Name, expr: tokens(r.Words.words), text: joinWords(r.Words.words)}
	}
	return rules, nil
}

func joinWords(words []string) string { return strings.Join(words, " ") }
