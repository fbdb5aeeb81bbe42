package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// aliased returns the alias docs/design.md's import-name convention gives a
// project package (its path below the module), or "" when it is imported by
// its own name: a package under dumpsyms/, symbols/ or unwind/ whose name is
// also that of another project package or of a standard package the project
// imports is dsNAME, symNAME or NAMEunwind.
func aliased(pkg string, taken map[string]int) string {
	dir, name := path2(pkg)
	if taken[name] < 2 {
		return ""
	}
	switch dir {
	case "dumpsyms":
		return "ds" + name
	case "symbols":
		return "sym" + name
	case "unwind":
		return name + "unwind"
	}
	return ""
}

// path2 splits a package path into its parent's first element and its name.
func path2(p string) (string, string) {
	name := p[strings.LastIndexByte(p, '/')+1:]
	first, _, _ := strings.Cut(p, "/")
	if !strings.Contains(p, "/") {
		first = ""
	}
	return first, name
}

// TestImportNames checks docs/design.md's import-name convention in every Go
// file, tests included: no two packages imported together share a name
// because the packages whose names collide are always imported with one
// alias, and no other project import is renamed.
func TestImportNames(t *testing.T) {
	root := corpus.Root()
	type imp struct {
		file, path, name string
		line             int
	}
	var imps []imp
	dirs := map[string]bool{}
	std := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if f.Name.Name != "main" {
			dirs[rel] = true
		}
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			name := ""
			if is.Name != nil {
				name = is.Name.Name
			}
			if q, ok := strings.CutPrefix(ip, module+"/"); ok {
				if q == rel {
					continue // an external test package importing its own package
				}
				imps = append(imps, imp{p, q, name, fset.Position(is.Pos()).Line})
			} else if !strings.Contains(strings.Split(ip, "/")[0], ".") {
				std[ip] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	taken := map[string]int{}
	for d := range dirs {
		_, name := path2(d)
		taken[name]++
	}
	for s := range std {
		_, name := path2(s)
		taken[name]++
	}
	for _, im := range imps {
		want := aliased(im.path, taken)
		if im.name == "_" || im.name == want {
			continue
		}
		rel, _ := filepath.Rel(root, im.file)
		if want == "" {
			t.Errorf("%s:%d imports %s as %s; docs/design.md's convention imports it by its own name", rel, im.line, im.path, im.name)
		} else {
			t.Errorf("%s:%d imports %s as %q; docs/design.md's convention names it %s", rel, im.line, im.path, im.name, want)
		}
	}
}
