// Package layering checks that the packages import only what docs/design.md
// allows them to: the layout table lists packages from the bottom layer up,
// each row with the project packages it may import, and no row may import a
// row below it in the table (so the layers form no cycle). Test files are
// not checked: tests may use any package of a lower layer and the test
// helpers.
package layering

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

const module = "github.com/gobreakpad/gobreakpad"

// row is one line of the layout table.
type row struct {
	line    int
	paths   []string // package patterns: "x" or "x/..." (x and everything below)
	imports []string // patterns of project packages it may import; "*" for any
}

var backticked = regexp.MustCompile("`([^`]+)`")

// patterns returns the backticked package patterns of a table cell.
func patterns(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, strings.TrimSuffix(m[1], "/"))
	}
	return out
}

// match reports whether package path p matches pattern pat.
func match(pat, p string) bool {
	if pat == "*" {
		return true
	}
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pat
}

// readTable parses the layout table of docs/design.md: the first table whose
// header starts with "| package".
func readTable(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "| package"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "|"):
			cells := strings.Split(strings.Trim(l, "|"), "|")
			if len(cells) < 3 {
				t.Fatalf("design.md:%d: a layout row needs 3 cells", n)
			}
			r := row{line: n, paths: patterns(cells[0]), imports: patterns(cells[len(cells)-1])}
			if strings.Contains(cells[len(cells)-1], "any") {
				r.imports = []string{"*"}
			}
			if len(r.paths) == 0 {
				t.Fatalf("design.md:%d: no package in the first cell", n)
			}
			rows = append(rows, r)
		case in:
			return rows
		}
	}
	return rows
}

// owner returns the index of the row that names p exactly, else of the row
// whose most specific wildcard pattern matches p.
func owner(rows []row, p string) int {
	best, bestLen := -1, -1
	for i, r := range rows {
		for _, pat := range r.paths {
			if pat == p {
				return i
			}
			if match(pat, p) && len(pat) > bestLen {
				best, bestLen = i, len(pat)
			}
		}
	}
	return best
}

func TestImportsFollowDesign(t *testing.T) {
	root := corpus.Root()
	rows := readTable(t, filepath.Join(root, "docs", "design.md"))
	if len(rows) < 5 {
		t.Fatalf("design.md: layout table has %d rows", len(rows))
	}
	// Every allowed import names a row at or below the importer's.
	for i, r := range rows {
		for _, imp := range r.imports {
			if imp == "*" {
				continue
			}
			j := owner(rows, strings.TrimSuffix(imp, "/..."))
			if j < 0 || j > i {
				t.Errorf("design.md:%d: %v may import %s, which is not in a row above it", r.line, r.paths, imp)
			}
		}
	}
	pkgs := map[string]map[string]bool{} // package -> project imports of its non-test files
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if pkgs[pkg] == nil {
			pkgs[pkg] = map[string]bool{}
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if q, ok := strings.CutPrefix(p, module+"/"); ok {
				pkgs[pkg][q] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, imps := range pkgs {
		i := owner(rows, pkg)
		if i < 0 {
			t.Errorf("package %s is in no row of docs/design.md's layout table", pkg)
			continue
		}
		for imp := range imps {
			ok := false
			for _, pat := range rows[i].imports {
				ok = ok || match(pat, imp)
			}
			// A package may always import packages of its own row.
			for _, pat := range rows[i].paths {
				ok = ok || match(pat, imp)
			}
			if !ok {
				t.Errorf("%s imports %s; docs/design.md:%d allows %v", pkg, imp, rows[i].line, rows[i].imports)
			}
		}
	}
}
