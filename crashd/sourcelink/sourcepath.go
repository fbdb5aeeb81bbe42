package sourcelink

import (
	"strconv"
	"strings"
)

// SourcePath is a source-server path as Mozilla's dump_syms writes it in a
// FILE record, "VCS:ROOT:PATH:REVISION": "hg:hg.mozilla.org/mozilla-central:dom/base/Foo.cpp:0123abcd",
// "git:github.com/rust-lang/rust:library/std/src/panicking.rs:4d90ac38",
// "s3:gecko-generated-sources:SHA512/ipc/ipdl/PFoo.cpp:".
type SourcePath struct {
	// VCS is the first field: hg, git, s3, ...
	VCS string
	// Server and Repo split ROOT at its first slash
	// ("hg.mozilla.org", "releases/mozilla-release"); a ROOT without a
	// slash is both.
	Server, Repo string
	// Path is the file in the repository; Revision the revision.
	Path, Revision string
}

// ParseSourcePath reads file as a source-server path: exactly four fields
// separated by colons, as Crash Stats requires, the first a word of
// letters and digits of two or more characters (so that a Windows path
// "c:\src\a.c:12" is not one).
func ParseSourcePath(file string) (SourcePath, bool) {
	f := strings.Split(file, ":")
	if len(f) != 4 || len(f[0]) < 2 || f[2] == "" {
		return SourcePath{}, false
	}
	for i := 0; i < len(f[0]); i++ {
		if c := f[0][i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return SourcePath{}, false
		}
	}
	sp := SourcePath{VCS: f[0], Path: f[2], Revision: f[3]}
	var ok bool
	if sp.Server, sp.Repo, ok = strings.Cut(f[1], "/"); !ok {
		sp.Server, sp.Repo = f[1], f[1]
	}
	return sp, true
}

// Display is the file as a page shows it: Path, without the 128-digit
// SHA-512 directory generated sources start with (Crash Stats drops it
// too).
func (sp SourcePath) Display() string {
	if first, rest, ok := strings.Cut(sp.Path, "/"); ok && len(first) == 128 && strings.Contains(rest, "/") {
		return rest
	}
	return sp.Path
}

// hosts are the built-in links of source-server paths by VCS and server:
// Crash Stats' VCS_MAPPINGS for hg.mozilla.org and github.com, and
// gitlab.com's blob URLs (ours). Each function gets the escaped repo,
// revision, path and line.
var hosts = map[string]map[string]func(repo, rev, path, line string) string{
	"hg": {
		"hg.mozilla.org": func(repo, rev, path, line string) string {
			return "https://hg.mozilla.org/" + repo + "/file/" + rev + "/" + path + "#l" + line
		},
	},
	"git": {
		"github.com": func(repo, rev, path, line string) string {
			return "https://github.com/" + repo + "/blob/" + rev + "/" + path + "#L" + line
		},
		"gitlab.com": func(repo, rev, path, line string) string {
			return "https://gitlab.com/" + repo + "/-/blob/" + rev + "/" + path + "#L" + line
		},
	},
}

// URL returns the link to line of sp ("" for none): only for the servers
// of the built-in table, with a repository, a revision and a path without
// "." or ".." segments.
func (sp SourcePath) URL(line int) string {
	mk := hosts[sp.VCS][sp.Server]
	if mk == nil || line <= 0 || sp.Revision == "" || sp.Repo == sp.Server {
		return ""
	}
	repo, ok := escapePath(sp.Repo)
	if !ok {
		return ""
	}
	path, ok := escapePath(sp.Path)
	if !ok {
		return ""
	}
	return safe(mk(repo, escapeSegment(sp.Revision), path, strconv.Itoa(line)))
}
