package collector

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// Throttle results of a rule, as Antenna's throttler names them.
const (
	// ResultAccept stores the crash and queues it for processing.
	ResultAccept = "accept"
	// ResultReject answers "Discarded=rule_NAME" and throws the crash away.
	ResultReject = "reject"
	// ResultFakeAccept answers as if the crash was accepted (a crash id)
	// and throws it away: for clients that retry rejected crashes forever.
	ResultFakeAccept = "fakeaccept"
	// ResultContinue (only as the outcome of a percentage) goes on with the next rule.
	ResultContinue = "continue"
)

// Rule is one throttle rule. Rules are evaluated in order; the first that
// matches and does not continue decides, as in Antenna's throttler. A rule
// matches when all its conditions hold (a rule without conditions matches
// every crash, as Antenna's always_match). With Percent set, a random number
// in [0, 100) decides: at or below Percent the result is Result, above it
// Otherwise (Antenna's (percentage, LE_result, GT_result)).
//
// In a configuration file (JSON):
//
//	{"name": "is_nightly", "when": [{"field": "ReleaseChannel", "prefix": "nightly"}], "result": "accept"}
//	{"name": "is_release", "when": [{"field": "ReleaseChannel", "equals": "release"}],
//	 "percent": 10, "result": "accept", "otherwise": "reject"}
//	{"name": "accept_everything", "result": "accept"}
type Rule struct {
	// Name names the rule in answers ("Discarded=rule_NAME"), metadata
	// (throttle_rule) and metrics: letters, digits and underscores.
	Name string `json:"name"`
	// When are the conditions, all of which must hold.
	When []Condition `json:"when,omitempty"`
	// Result is accept, reject or fakeaccept (or continue with Percent).
	Result string `json:"result"`
	// Percent, when set (0-100), keeps that share of the matching crashes
	// for Result and gives the rest Otherwise.
	Percent *float64 `json:"percent,omitempty"`
	// Otherwise is the result of the crashes above Percent: reject (the
	// default), accept, fakeaccept or continue.
	Otherwise string `json:"otherwise,omitempty"`
}

// Condition tests one annotation. Values are compared as strings (a JSON
// value that is not a string as its JSON text). A condition on an
// annotation the crash does not have is false, except Exists: false. Every
// test given must hold.
type Condition struct {
	// Field is the annotation's name (case-sensitive, as sent).
	Field string `json:"field"`
	// Exists, when set, requires the annotation to be present (true) or absent (false).
	Exists *bool `json:"exists,omitempty"`
	// Equals requires the value to be this string.
	Equals *string `json:"equals,omitempty"`
	// NotEquals requires the value to differ from this string.
	NotEquals *string `json:"not_equals,omitempty"`
	// In requires the value to be one of these strings.
	In []string `json:"in,omitempty"`
	// Prefix requires the value to start with this string.
	Prefix *string `json:"prefix,omitempty"`
	// Regexp requires the value to match this regular expression (Go's RE2 syntax, unanchored).
	Regexp string `json:"regexp,omitempty"`

	re *regexp.Regexp
}

// DefaultRules is the rule set when none is configured: Antenna's ACCEPT_ALL.
func DefaultRules() []Rule {
	return []Rule{{Name: "accept_everything", Result: ResultAccept}}
}

// noMatch is the rule name Antenna reports when no rule matched (the crash is rejected).
const noMatch = "NO_MATCH"

// throttler evaluates compiled rules.
type throttler struct {
	rules []Rule
	rand  func() float64 // in [0, 1)
}

func validRuleName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func newThrottler(rules []Rule) (*throttler, error) {
	if rules == nil {
		rules = DefaultRules()
	}
	t := &throttler{rand: rand.Float64}
	for i, r := range rules {
		if !validRuleName(r.Name) {
			return nil, fmt.Errorf("throttle rule %d: name %q: only letters, digits and underscores", i+1, r.Name)
		}
		switch r.Result {
		case ResultAccept, ResultReject, ResultFakeAccept:
		case ResultContinue:
			if r.Percent == nil {
				return nil, fmt.Errorf("throttle rule %s: result continue needs a percent", r.Name)
			}
		default:
			return nil, fmt.Errorf("throttle rule %s: result %q: want accept, reject, fakeaccept (or continue with a percent)", r.Name, r.Result)
		}
		if r.Otherwise == "" {
			r.Otherwise = ResultReject
		}
		switch r.Otherwise {
		case ResultAccept, ResultReject, ResultFakeAccept, ResultContinue:
		default:
			return nil, fmt.Errorf("throttle rule %s: otherwise %q: want accept, reject, fakeaccept or continue", r.Name, r.Otherwise)
		}
		if r.Percent != nil && (*r.Percent < 0 || *r.Percent > 100) {
			return nil, fmt.Errorf("throttle rule %s: percent %v: not in 0-100", r.Name, *r.Percent)
		}
		r.When = append([]Condition(nil), r.When...)
		for j := range r.When {
			c := &r.When[j]
			if c.Field == "" {
				return nil, fmt.Errorf("throttle rule %s: condition %d: no field", r.Name, j+1)
			}
			if c.Regexp != "" {
				re, err := regexp.Compile(c.Regexp)
				if err != nil {
					return nil, fmt.Errorf("throttle rule %s: condition %d: %w", r.Name, j+1, err)
				}
				c.re = re
			}
		}
		t.rules = append(t.rules, r)
	}
	return t, nil
}

func (c *Condition) match(annotations map[string]any) bool {
	v, ok := annotations[c.Field]
	if c.Exists != nil && *c.Exists != ok {
		return false
	}
	if !ok {
		return c.Exists != nil // only "exists: false" holds for an absent annotation
	}
	s := crash.AnnotationString(v)
	if c.Equals != nil && s != *c.Equals {
		return false
	}
	if c.NotEquals != nil && s == *c.NotEquals {
		return false
	}
	if c.In != nil {
		found := false
		for _, x := range c.In {
			if x == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if c.Prefix != nil && !strings.HasPrefix(s, *c.Prefix) {
		return false
	}
	if c.re != nil && !c.re.MatchString(s) {
		return false
	}
	return true
}

// throttle returns the result for a crash's annotations and the name of
// the deciding rule; with no rule deciding, reject and NO_MATCH (Antenna).
func (t *throttler) throttle(annotations map[string]any) (result, rule string) {
	for i := range t.rules {
		r := &t.rules[i]
		ok := true
		for j := range r.When {
			if !r.When[j].match(annotations) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if r.Percent == nil {
			return r.Result, r.Name
		}
		res := r.Otherwise
		if t.rand()*100 <= *r.Percent {
			res = r.Result
		}
		if res != ResultContinue {
			return res, r.Name
		}
	}
	return ResultReject, noMatch
}
