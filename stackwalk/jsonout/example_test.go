package jsonout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// Walk a minidump and write rust-minidump's JSON report of it.
func ExampleWrite() {
	dir := filepath.Join("..", "..", "testdata", "walk")
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	syms := symbreakpad.NewDirs(filepath.Join(dir, "symbols"))
	defer syms.Close()
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: syms})
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if err := jsonout.Write(&out, p, false); err != nil {
		log.Fatal(err)
	}
	// A few fields of the report.
	var report struct {
		Status    string `json:"status"`
		CrashInfo struct {
			Type string `json:"type"`
		} `json:"crash_info"`
		CrashingThread struct {
			Frames []struct {
				Function string `json:"function"`
			} `json:"frames"`
		} `json:"crashing_thread"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.Status, report.CrashInfo.Type)
	for _, fr := range report.CrashingThread.Frames {
		fmt.Println(fr.Function)
	}
	// Output:
	// OK SIGSEGV / SEGV_MAPERR
	// render
	// main
	// _start
}
