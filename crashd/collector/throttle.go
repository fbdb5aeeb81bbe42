package collector

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

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
// annotation the crash does not have is false, except Exists: false, or
// when Default gives the value of a missing annotation. Every test given
// must hold.
type Condition struct {
	// Field is the annotation's name (case-sensitive, as sent).
	Field string `json:"field"`
	// Exists, when set, requires the annotation to be present (true) or absent (false).
	Exists *bool `json:"exists,omitempty"`
	// Default, when set, is the value of the annotation when the crash
	// does not have it: the other tests then apply to it (Antenna's
	// safe_get default, e.g. a missing ProcessType counting as "browser").
	Default *string `json:"default,omitempty"`
	// JSON, when set, is a dotted path into the annotation's value read as
	// JSON (a text annotation holding a JSON document, or a JSON object
	// annotation): "system.os.windowsBuildNumber"; a number in the path
	// indexes an array. The tests apply to the value found there; a value
	// that is not JSON or a path that leads nowhere makes the condition
	// false.
	JSON string `json:"json,omitempty"`
	// Equals requires the value to be this string.
	Equals *string `json:"equals,omitempty"`
	// NotEquals requires the value to differ from this string.
	NotEquals *string `json:"not_equals,omitempty"`
	// In requires the value to be one of these strings.
	In []string `json:"in,omitempty"`
	// NotIn requires the value to be none of these strings (Antenna's
	// lists of supported products and Android package names).
	NotIn []string `json:"not_in,omitempty"`
	// Prefix requires the value to start with this string.
	Prefix *string `json:"prefix,omitempty"`
	// LessThan requires the value to sort before this string, byte by byte
	// (Python's str comparison for UTF-8 text): build ids before a date.
	LessThan *string `json:"less_than,omitempty"`
	// Regexp requires the value to match this regular expression (Go's RE2 syntax, unanchored).
	Regexp string `json:"regexp,omitempty"`
	// AtMost and AtLeast require the value to be a number no greater (no
	// less) than this: a JSON number, or a text annotation holding a
	// decimal number (not through JSON, where the value must be a JSON
	// number, as Antenna's isinstance(value, int)).
	AtMost  *float64 `json:"at_most,omitempty"`
	AtLeast *float64 `json:"at_least,omitempty"`
	// BuildIDOlderThanDays requires the value to be a Mozilla build id
	// (20YYMMDDhhmmss: 14 digits starting "20") whose day is more than this
	// many days before now (Antenna's has_old_buildid: 730).
	BuildIDOlderThanDays *int `json:"buildid_older_than_days,omitempty"`

	re   *regexp.Regexp
	path []string
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
	rand  func() float64   // in [0, 1)
	now   func() time.Time // for BuildIDOlderThanDays
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
	t := &throttler{rand: rand.Float64, now: time.Now}
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
			if c.JSON != "" {
				c.path = strings.Split(c.JSON, ".")
				if slices.Contains(c.path, "") {
					return nil, fmt.Errorf("throttle rule %s: condition %d: json path %q has an empty element", r.Name, j+1, c.JSON)
				}
			}
			if c.BuildIDOlderThanDays != nil && *c.BuildIDOlderThanDays < 0 {
				return nil, fmt.Errorf("throttle rule %s: condition %d: buildid_older_than_days %d: negative", r.Name, j+1, *c.BuildIDOlderThanDays)
			}
		}
		t.rules = append(t.rules, r)
	}
	return t, nil
}

// buildIDRE is a Mozilla build id: 20YYMMDDhhmmss (Antenna's BUILDID_RE).
var buildIDRE = regexp.MustCompile(`^20\d{12}$`)

// parsedJSON caches, for one crash, the JSON read from its annotations.
type parsedJSON map[string]any

// jsonValue returns the annotation's value read as JSON: a string parsed,
// anything else as it is; ok is false for a string that is not JSON.
func (p parsedJSON) jsonValue(field string, v any) (any, bool) {
	s, isString := v.(string)
	if !isString {
		return v, true
	}
	if x, seen := p[field]; seen {
		return x, x != nil
	}
	var x any
	// An annotation is bounded by the body size; json.Unmarshal bounds
	// nesting. A JSON null reads as nil, which counts as not JSON here:
	// no test holds for it (Antenna's "not system_data").
	if json.Unmarshal([]byte(s), &x) != nil {
		x = nil
	}
	p[field] = x
	return x, x != nil
}

// lookup follows a JSON path through objects and arrays.
func lookup(v any, path []string) (any, bool) {
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// number returns a value as a number: a JSON number, or (when text may be
// a number) a string holding a decimal number.
func number(v any, text bool) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		if text {
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return f, err == nil
		}
	}
	return 0, false
}

func (c *Condition) match(annotations map[string]any, t *throttler, parsed parsedJSON) bool {
	v, ok := annotations[c.Field]
	if c.Exists != nil && *c.Exists != ok {
		return false
	}
	if !ok {
		if c.Default == nil {
			return c.Exists != nil // only "exists: false" holds for an absent annotation
		}
		v = *c.Default
	}
	text := true
	if c.path != nil {
		cache := parsed
		if !ok {
			cache = parsedJSON{} // a default is the condition's own: not the crash's to share
		}
		doc, isJSON := cache.jsonValue(c.Field, v)
		if !isJSON {
			return false
		}
		if v, ok = lookup(doc, c.path); !ok || v == nil {
			return false
		}
		text = false
	}
	s := crash.AnnotationString(v)
	if c.Equals != nil && s != *c.Equals {
		return false
	}
	if c.NotEquals != nil && s == *c.NotEquals {
		return false
	}
	if c.In != nil && !slices.Contains(c.In, s) {
		return false
	}
	if c.NotIn != nil && slices.Contains(c.NotIn, s) {
		return false
	}
	if c.Prefix != nil && !strings.HasPrefix(s, *c.Prefix) {
		return false
	}
	if c.LessThan != nil && s >= *c.LessThan {
		return false
	}
	if c.re != nil && !c.re.MatchString(s) {
		return false
	}
	if c.AtMost != nil || c.AtLeast != nil {
		n, isNumber := number(v, text)
		if !isNumber || (c.AtMost != nil && n > *c.AtMost) || (c.AtLeast != nil && n < *c.AtLeast) {
			return false
		}
	}
	if c.BuildIDOlderThanDays != nil && !oldBuildID(s, *c.BuildIDOlderThanDays, t.now()) {
		return false
	}
	return true
}

// oldBuildID tells a build id whose day is more than days before now
// (Antenna's match_old_buildid; its naive local "now" is UTC here).
func oldBuildID(s string, days int, now time.Time) bool {
	if !buildIDRE.MatchString(s) {
		return false
	}
	day, err := time.Parse("20060102", s[:8])
	if err != nil {
		return false // not a date: not a build id to look at
	}
	return day.Before(now.UTC().AddDate(0, 0, -days))
}

// throttle returns the result for a crash's annotations and the name of
// the deciding rule; with no rule deciding, reject and NO_MATCH (Antenna).
func (t *throttler) throttle(annotations map[string]any) (result, rule string) {
	parsed := parsedJSON{}
	for i := range t.rules {
		r := &t.rules[i]
		ok := true
		for j := range r.When {
			if !r.When[j].match(annotations, t, parsed) {
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
