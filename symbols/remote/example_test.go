package remote_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/remote"
)

// A Breakpad-layout HTTP store, here a file server over the repository's
// example store, answers lookups through a cache directory; a walk passes
// the source (or a symbols.Chain of several) as stackwalk.Options.Symbols.
func ExampleBreakpad() {
	srv := httptest.NewServer(http.FileServer(http.Dir("../../testdata/walk/symbols")))
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "symcache")
	defer os.RemoveAll(dir)

	client := &remote.Client{Cache: &cache.Cache{Dir: dir}}
	src := remote.NewBreakpad(srv.URL, client)
	defer src.Close()
	syms, err := src.Load(symbols.Module{DebugFile: "demo", DebugID: "6F6D6564622D69756C642D69640000000"})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := syms.Lookup.Lookup(0x1110, true)
	fmt.Printf("%s, inlined %s at %s:%d\n", s.Function, s.Inlines[0].Function, s.Inlines[0].File, s.Inlines[0].Line)
	// A second source over the same cache asks the server nothing.
	again := remote.NewBreakpad(srv.URL, &remote.Client{Cache: &cache.Cache{Dir: dir}})
	defer again.Close()
	again.Load(symbols.Module{DebugFile: "demo", DebugID: "6F6D6564622D69756C642D69640000000"})
	fmt.Println("requests:", client.Requests())
	// Output:
	// render, inlined draw_pixel at /src/demo/canvas.h:9
	// requests: 1
}
