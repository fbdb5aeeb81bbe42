package index

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// Op is a text operator of a search, as Socorro's Super Search spells it
// at the start of a value (signature=~AddTo).
type Op string

// The text operators. ~ ^ $ compare case-insensitively (foldFunc); = and
// the bare value compare exactly.
const (
	// OpExact: the whole value, exactly (a bare value, or "=" before it).
	OpExact Op = "="
	// OpContains: the value anywhere ("~").
	OpContains Op = "~"
	// OpStarts: the value at the start ("^").
	OpStarts Op = "^"
	// OpEnds: the value at the end ("$").
	OpEnds Op = "$"
	// OpEmpty: the field is empty ("__null__"; takes no value).
	OpEmpty Op = "__null__"
)

// Match is one condition on a text field: Op against Value, negated by
// Not ("!" before the operator).
type Match struct {
	Op    Op
	Not   bool
	Value string
}

// MatchFields are the fields of crashes a FieldMatch takes.
var MatchFields = []string{"product", "version", "os", "cpu", "process_type", "signature", "crash_reason", "module"}

// FieldMatch is a Match on one of MatchFields.
type FieldMatch struct {
	Field string
	Match
}

// ParseMatch reads a search value with Socorro's operator prefixes: "!"
// negates what follows; then "__null__" (the field is empty: nothing may
// follow), "=" (exact: the rest taken as it is, so "==x" is the value
// "=x"), "~" (contains), "^" (starts with), "$" (ends with); a value
// with none of them is an exact match. "@" (Socorro's regular
// expression) is refused, as are "~", "^" and "$" with nothing after them.
func ParseMatch(s string) (Match, error) {
	var m Match
	rest, not := strings.CutPrefix(s, "!")
	m.Not = not
	switch {
	case strings.HasPrefix(rest, string(OpEmpty)):
		if rest != string(OpEmpty) {
			return m, fmt.Errorf("%q: __null__ takes no value", s)
		}
		m.Op = OpEmpty
		return m, nil
	case strings.HasPrefix(rest, "@"):
		return m, fmt.Errorf("%q: regular expressions (@) are not supported", s)
	case rest != "" && strings.ContainsRune("=~^$", rune(rest[0])):
		m.Op, m.Value = Op(rest[:1]), rest[1:]
		if m.Op != OpExact && m.Value == "" {
			return m, fmt.Errorf("%q: %s needs a value after it", s, m.Op)
		}
		return m, nil
	}
	m.Op, m.Value = OpExact, rest
	return m, nil
}

// String is the match as a search value: ParseMatch(m.String()) == m.
func (m Match) String() string {
	s := ""
	if m.Not {
		s = "!"
	}
	switch m.Op {
	case OpEmpty:
		return s + string(OpEmpty)
	case OpExact, "":
		if m.Value == "" || strings.ContainsRune("=~^$!@", rune(m.Value[0])) || strings.HasPrefix(m.Value, string(OpEmpty)) {
			return s + "=" + m.Value
		}
		return s + m.Value
	}
	return s + string(m.Op) + m.Value
}

// foldFunc is the SQL function both dialects define that lower-cases text
// with Unicode's case mapping (SQLite's lower() and LIKE fold ASCII only;
// PostgreSQL's lower() on "C"-collated text too): SQLite's is Go's
// strings.ToLower (registered below), PostgreSQL's lower() under ICU's
// root collation (postgresFold). Both sides of ~ ^ $ go through it.
const foldFunc = "crashd_fold"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(foldFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		case nil:
			return nil, nil
		default:
			return nil, fmt.Errorf("%s: text expected, got %T", foldFunc, v)
		}
	})
}

// cond returns the condition of m on the text expression col, and its
// arguments. LIKE patterns escape the value's % _ and \ (likeEscape);
// LIKE compares bytes on both dialects (SQLite's case_sensitive_like is
// on: dsn), the folding is explicit.
func (m Match) cond(col string) (string, []any) {
	var c string
	var args []any
	switch m.Op {
	case OpEmpty:
		c = col + " = ''"
	case OpContains, OpStarts, OpEnds:
		pat := likeEscape(m.Value)
		switch m.Op {
		case OpContains:
			pat = "%" + pat + "%"
		case OpStarts:
			pat += "%"
		case OpEnds:
			pat = "%" + pat
		}
		c = foldFunc + "(" + col + `) LIKE ` + foldFunc + `(?) ESCAPE '\'`
		args = []any{pat}
	default:
		c = col + " = ?"
		args = []any{m.Value}
	}
	if m.Not {
		c = "NOT (" + c + ")"
	}
	return c, args
}

// moduleCond is m's condition on the module list ("|a.so|b.dll|"): a crash
// matches when one of its modules does (with Not: when none does). A
// value holding "|" matches no module.
func (m Match) moduleCond() (string, []any) {
	var c string
	var args []any
	switch {
	case m.Op == OpEmpty:
		c = "modules = ''"
	case strings.ContainsRune(m.Value, '|'):
		c = "1 = 0"
	case m.Op == OpExact:
		c = `modules LIKE ? ESCAPE '\'`
		args = []any{"%|" + likeEscape(m.Value) + "|%"}
	default:
		pat := likeEscape(m.Value)
		switch m.Op {
		case OpContains:
			// The value holds no "|": any match is within one name.
			pat = "%" + pat + "%"
		case OpStarts:
			pat = "%|" + pat + "%"
		case OpEnds:
			pat = "%" + pat + "|%"
		}
		c = foldFunc + `(modules) LIKE ` + foldFunc + `(?) ESCAPE '\'`
		args = []any{pat}
	}
	if m.Not {
		c = "NOT (" + c + ")"
	}
	return c, args
}
