// Command socorro is tools/socorro/run.sh's driver (docs/compat.md): it
// reads lines "DUMP<TAB>SYMBOL_DIR ..." on stdin, walks each dump, writes its
// rust-minidump JSON report (what Socorro's processor signs) as
// OUT/NNNN.json, and prints "DUMP<TAB>JSON<TAB>DEFAULT<TAB>SOCORRO_LISTS":
// the signature with gobreakpad's default lists, and with the lists of
// LISTS_DIR (Socorro's siglists) and bare module names, as Socorro makes
// them. A dump that cannot be walked prints "DUMP<TAB>ERR<TAB>ERR<TAB>ERR".
//
//	socorro OUT LISTS_DIR < dumps.tsv
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: socorro OUT LISTS_DIR < dumps.tsv")
		os.Exit(2)
	}
	out, listsDir := os.Args[1], os.Args[2]
	l := signature.DefaultLists()
	if err := l.LoadDir(listsDir, false); err != nil {
		fmt.Fprintln(os.Stderr, "socorro:", err)
		os.Exit(2)
	}
	withLists, err := signature.New(l)
	if err != nil {
		fmt.Fprintln(os.Stderr, "socorro:", err)
		os.Exit(2)
	}
	withLists.BareModules = true
	sc := bufio.NewScanner(os.Stdin)
	for n := 1; sc.Scan(); n++ {
		dump, syms, _ := strings.Cut(sc.Text(), "\t")
		st, err := walk(dump, strings.Fields(syms))
		if err != nil {
			fmt.Fprintf(os.Stderr, "socorro: %s: %v\n", dump, err)
			fmt.Printf("%s\tERR\tERR\tERR\n", dump)
			continue
		}
		var buf bytes.Buffer
		if err := jsonout.Write(&buf, st, false); err != nil {
			fmt.Fprintf(os.Stderr, "socorro: %s: %v\n", dump, err)
			os.Exit(1)
		}
		path := filepath.Join(out, fmt.Sprintf("%04d.json", n))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "socorro:", err)
			os.Exit(1)
		}
		fmt.Printf("%s\t%s\t%s\t%s\n", dump, path, signature.Of(st), withLists.Process(st).Signature)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "socorro:", err)
		os.Exit(1)
	}
}

// walk reads and walks one dump with the Breakpad symbol directories given.
func walk(dump string, syms []string) (*stackwalk.ProcessState, error) {
	f, err := minidump.Open(dump)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var opt stackwalk.Options
	if len(syms) > 0 {
		d := symbreakpad.NewDirs(syms...)
		defer d.Close()
		opt.Symbols = d
	}
	return stackwalk.Process(f, opt)
}
