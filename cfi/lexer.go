package cfi

import (
	"io"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// The postfix language is tokenized on white space only, as Breakpad's
// evaluator does (istringstream >> string): "8+" is one word, an
// identifier, not a number and an operator. This lexer splits words with
// Breakpad's exact white-space rules and tells register names (in rule
// text) from expression words for the participle grammar; a regular
// expression lexer cannot tell whole words without look-ahead, and was
// several times slower.

// Token types of the word lexer. Participle sees the structure (names and
// words); tokens classifies each word (classifyWord).
const (
	tokEOF lexer.TokenType = lexer.EOF
	// tokWord is a word of an expression.
	tokWord lexer.TokenType = -2 - iota
	// tokName is a word ending in ':' in STACK CFI rule text: the
	// register whose rule the following words give.
	tokName
)

var wordSymbols = map[string]lexer.TokenType{"EOF": tokEOF, "Word": tokWord, "Name": tokName}

// Classes of postfix words.
const (
	wordOp     = iota // a lone operator: + - * / % @ ^ =
	wordGlued         // "=" glued to the next word ("=$eip"), as MSVC 2010 writes in LTO mode
	wordNumber        // a decimal literal: -?[-+]?[0-9]+
	wordIdent         // a register, a $-variable, a pseudo-value such as .cfa
)

// wordLexer is a participle lexer.Definition over white-space separated
// words. With names set it lexes STACK CFI rule text, which Breakpad's
// CFIRuleParser splits on " \t\r\n" (strtok_r) before the evaluator splits
// each expression on all C white space.
type wordLexer struct{ names bool }

// Symbols implements lexer.Definition.
func (d wordLexer) Symbols() map[string]lexer.TokenType { return wordSymbols }

// Lex implements lexer.Definition.
func (d wordLexer) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

// LexString implements lexer.StringDefinition.
func (d wordLexer) LexString(filename string, s string) (lexer.Lexer, error) {
	return &words{names: d.names, s: s, pos: lexer.Position{Filename: filename, Line: 1, Column: 1}}, nil
}

// words is the lexer state.
type words struct {
	names bool
	s     string
	off   int
	pos   lexer.Position
	rest  string // sub-words of a rule-text word holding \v or \f
}

// isSpace reports C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isBreak reports the separators of Breakpad's CFIRuleParser.
func isBreak(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Next implements lexer.Lexer.
func (l *words) Next() (lexer.Token, error) {
	for {
		if strings.Trim(l.rest, "\v\f") != "" {
			return l.postfixWord(&l.rest), nil
		}
		sep := isSpace
		if l.names {
			sep = isBreak
		}
		for l.off < len(l.s) && sep(l.s[l.off]) {
			l.off++
		}
		if l.off == len(l.s) {
			return lexer.EOFToken(l.at(l.off)), nil
		}
		start := l.off
		for l.off < len(l.s) && !sep(l.s[l.off]) {
			l.off++
		}
		w := l.s[start:l.off]
		if !l.names {
			return lexer.Token{Type: tokWord, Value: w, Pos: l.at(start)}, nil
		}
		if strings.HasSuffix(w, ":") {
			return lexer.Token{Type: tokName, Value: w[:len(w)-1], Pos: l.at(start)}, nil
		}
		// An expression word of rule text: the evaluator splits it
		// again on the white space the rule parser keeps (\v, \f).
		// A word of only \v and \f still counts as an expression for
		// the rule parser, though the evaluator finds no token in it;
		// tokens skips it.
		if strings.Trim(w, "\v\f") == "" {
			return lexer.Token{Type: tokWord, Value: w, Pos: l.at(start)}, nil
		}
		l.rest = w
	}
}

// postfixWord takes the next postfix word from *s, which holds at least one.
func (l *words) postfixWord(s *string) lexer.Token {
	t := strings.TrimLeft(*s, "\v\f")
	end := strings.IndexAny(t, "\v\f")
	if end < 0 {
		end = len(t)
	}
	w := t[:end]
	*s = strings.TrimLeft(t[end:], "\v\f")
	return lexer.Token{Type: tokWord, Value: w, Pos: l.at(l.off)}
}

func (l *words) at(off int) lexer.Position {
	p := l.pos
	p.Offset = off
	p.Column = off + 1
	return p
}

// classifyWord classifies one postfix word, as Breakpad does: Evaluate
// splits a glued "=", EvaluateToken matches operators, and
// PopValueOrIdentifier tells literals from identifiers.
func classifyWord(w string) int {
	switch {
	case len(w) == 1 && strings.IndexByte("+-*/%@^=", w[0]) >= 0:
		return wordOp
	case len(w) > 1 && w[0] == '=':
		return wordGlued
	case isNumber(w):
		return wordNumber
	}
	return wordIdent
}

// isNumber reports whether w has the form of a decimal literal,
// -?[-+]?[0-9]+, whatever its size.
func isNumber(w string) bool {
	if strings.HasPrefix(w, "-") {
		w = w[1:]
	}
	if w != "" && (w[0] == '-' || w[0] == '+') {
		w = w[1:]
	}
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}
