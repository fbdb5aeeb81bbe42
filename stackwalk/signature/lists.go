package signature

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The names of the signature lists: each is a file NAME.txt, in the
// embedded defaults and in a directory given to LoadDir. The first four are
// Socorro's file names, so Socorro's siglists directory loads as it is.
const (
	IrrelevantList  = "irrelevant_signature_re"
	PrefixList      = "prefix_signature_re"
	LineNumbersList = "signatures_with_line_numbers_re"
	SentinelsList   = "signature_sentinels"
	OOMList         = "oom_signature_re"
)

// listNames are every list, in the order LoadDir reads them.
var listNames = []string{IrrelevantList, PrefixList, LineNumbersList, SentinelsList, OOMList}

//go:embed lists/*.txt
var defaultFiles embed.FS

// Lists are the data of signature generation: which frames to skip, which
// to keep and continue past, which get their line number, where the
// interesting part of a stack starts, and which frames mark an
// out-of-memory crash. Every list but Sentinels holds regular expressions
// (Go RE2 syntax); see docs/signature.md.
type Lists struct {
	// Irrelevant frames are left out of the signature (matched from the
	// start of the normalized frame).
	Irrelevant []string
	// Prefix frames are kept and the signature goes on to the next frame
	// (matched from the start).
	Prefix []string
	// LineNumbers frames get ":LINE" appended (matched from the start).
	LineNumbers []string
	// Sentinels are exact normalized frames: the frames above the first one
	// present are dropped.
	Sentinels []string
	// OOM fragments (searched anywhere) mark an out-of-memory crash.
	OOM []string
}

// DefaultLists returns a copy of gobreakpad's embedded lists.
func DefaultLists() *Lists {
	l := &Lists{}
	for _, name := range listNames {
		b, err := defaultFiles.ReadFile("lists/" + name + ".txt")
		if err != nil {
			panic(fmt.Sprintf("signature: embedded list %s: %v", name, err)) // a build error, not input
		}
		entries, err := ParseList(bytes.NewReader(b), name)
		if err != nil {
			panic(fmt.Sprintf("signature: embedded list: %v", err))
		}
		*l.list(name) = entries
	}
	return l
}

// list returns the field holding the named list.
func (l *Lists) list(name string) *[]string {
	switch name {
	case IrrelevantList:
		return &l.Irrelevant
	case PrefixList:
		return &l.Prefix
	case LineNumbersList:
		return &l.LineNumbers
	case SentinelsList:
		return &l.Sentinels
	case OOMList:
		return &l.OOM
	}
	return nil
}

// LoadDir reads the lists present in dir (NAME.txt for each list name; a
// missing file leaves that list as it is). With extend, a file's entries are
// added after the list's current ones; otherwise they replace them.
func (l *Lists) LoadDir(dir string, extend bool) error {
	found := 0
	for _, name := range listNames {
		path := filepath.Join(dir, name+".txt")
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("signature lists: %w", err)
		}
		entries, err := ParseList(f, path)
		f.Close()
		if err != nil {
			return err
		}
		found++
		p := l.list(name)
		if extend {
			*p = append(append([]string(nil), *p...), entries...)
		} else {
			*p = entries
		}
	}
	if found == 0 {
		return fmt.Errorf("signature lists: no list file (%s.txt, ...) in %s", IrrelevantList, dir)
	}
	return nil
}

// ParseList reads one list: one entry a line, surrounding blanks trimmed,
// empty lines and lines starting with "#" skipped. Entries of every list but
// the sentinels must compile as regular expressions; name (a file name or
// list name) is used in errors.
func ParseList(r io.Reader, name string) ([]string, error) {
	regex := !strings.HasPrefix(filepath.Base(name), SentinelsList)
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if regex {
			if _, err := regexp.Compile(line); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// compileStart joins patterns into one expression matching any of them at
// the start of a string (Python's re.match), or nil for no patterns.
func compileStart(patterns []string) (*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	return regexp.Compile(`^(?:` + joinAlternatives(patterns) + `)`)
}

// compileAnywhere joins patterns into one expression found anywhere.
func compileAnywhere(patterns []string) (*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	return regexp.Compile(joinAlternatives(patterns))
}

func joinAlternatives(patterns []string) string {
	parts := make([]string, len(patterns))
	for i, p := range patterns {
		parts[i] = "(?:" + p + ")"
	}
	return strings.Join(parts, "|")
}
