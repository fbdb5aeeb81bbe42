package web

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// BugTracker is a bug tracker the signature page offers a "file a bug"
// link to: its own new-issue form, prefilled (configuration
// bug_trackers).
type BugTracker struct {
	// Name is what the link says ("File a bug in NAME").
	Name string `json:"name"`
	// Kind is github, gitlab, jira or bugzilla.
	Kind string `json:"kind"`
	// URL is the project's (https://github.com/OWNER/REPO,
	// https://gitlab.com/GROUP/PROJECT) or the server's
	// (https://jira.example.com, https://bugzilla.mozilla.org).
	URL string `json:"url"`
	// ProjectID and IssueType are Jira's pid and issuetype (ids).
	ProjectID string `json:"project_id,omitempty"`
	IssueType string `json:"issue_type,omitempty"`
	// Product and Component are Bugzilla's.
	Product   string `json:"product,omitempty"`
	Component string `json:"component,omitempty"`
}

// The kinds of bug tracker.
var BugTrackerKinds = []string{"github", "gitlab", "jira", "bugzilla"}

// MaxFileBugURL bounds a "file a bug" link: the body is cut to fit
// (browsers and the trackers' servers refuse longer URLs).
const MaxFileBugURL = 8000

// Check refuses a tracker whose links could not work.
func (b BugTracker) Check() error {
	if b.Name == "" {
		return fmt.Errorf("bug tracker %q: no name", b.URL)
	}
	u, err := url.Parse(b.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("bug tracker %s: url %q: an http or https URL without query", b.Name, b.URL)
	}
	switch b.Kind {
	case "github", "gitlab":
		if strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("bug tracker %s: a %s url names the project (https://host/OWNER/REPO)", b.Name, b.Kind)
		}
	case "jira":
		if b.ProjectID == "" || b.IssueType == "" {
			return fmt.Errorf("bug tracker %s: jira needs project_id and issue_type (pid and issuetype ids)", b.Name)
		}
	case "bugzilla":
		if b.Product == "" || b.Component == "" {
			return fmt.Errorf("bug tracker %s: bugzilla needs product and component", b.Name)
		}
	default:
		return fmt.Errorf("bug tracker %s: kind %q: one of %s", b.Name, b.Kind, strings.Join(BugTrackerKinds, ", "))
	}
	return nil
}

// NewIssueURL is the tracker's new-issue form prefilled with title and
// body, at most MaxFileBugURL bytes (the body cut, marked, to fit).
func (b BugTracker) NewIssueURL(title, body string) string {
	title = cutRunes(title, 200)
	for {
		s := b.newIssueURL(title, body)
		if len(s) <= MaxFileBugURL || body == "" {
			return s
		}
		// Escaping takes at most 9 bytes per byte of body (UTF-8 bytes
		// as %XX): cut at least what overflows, in proportion.
		over := len(s) - MaxFileBugURL
		cut := max(over/3, 16)
		body = strings.TrimSuffix(body, "\n…")
		body = cutRunes(body, max(len(body)-cut, 0))
		if body != "" {
			body += "\n…"
		}
	}
}

func (b BugTracker) newIssueURL(title, body string) string {
	base := strings.TrimSuffix(b.URL, "/")
	v := url.Values{}
	var path string
	switch b.Kind {
	case "github":
		path = "/issues/new"
		v.Set("title", title)
		v.Set("body", body)
	case "gitlab":
		path = "/-/issues/new"
		v.Set("issue[title]", title)
		v.Set("issue[description]", body)
	case "jira":
		path = "/secure/CreateIssueDetails!init.jspa"
		v.Set("pid", b.ProjectID)
		v.Set("issuetype", b.IssueType)
		v.Set("summary", title)
		v.Set("description", body)
	case "bugzilla":
		path = "/enter_bug.cgi"
		v.Set("product", b.Product)
		v.Set("component", b.Component)
		v.Set("short_desc", title)
		v.Set("comment", body)
	}
	return base + path + "?" + v.Encode()
}

// cutRunes cuts s to at most n bytes on a character boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
