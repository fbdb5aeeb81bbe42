package remote

import (
	"os"
	"reflect"
	"testing"

	"strings"
)

func TestParseSymbolPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	srv := func(url, cache string) PathElem { return PathElem{Kind: SymbolServer, URL: url, Cache: cache} }
	for _, c := range []struct {
		why, in string
		want    []PathElem
	}{
		{"empty", "", nil},
		{"blanks only", " ; ;\n", nil},
		// Microsoft's documented syntax.
		{"srv*URL", "srv*https://a.example/sym/", []PathElem{srv("https://a.example/sym", "")}},
		{"srv*CACHE*URL", `SRV*c:\cache*https://a.example`, []PathElem{srv("https://a.example", `c:\cache`)}},
		{"several downstream stores: the first is the cache", "srv*/down1*/down2*http://a.example", []PathElem{srv("http://a.example", "/down1")}},
		{"an empty cache part is none", "srv**http://a.example", []PathElem{srv("http://a.example", "")}},
		{"symsrv*DLL*CACHE*URL", "symsrv*symsrv.dll*/c*http://a.example", []PathElem{srv("http://a.example", "/c")}},
		{"symsrv alone", "symsrv", nil},
		{"cache*DIR: the cache of later elements naming none", "srv*http://before.example;cache*/c;srv*http://a.example;srv*/own*http://b.example;http://bp.example",
			[]PathElem{srv("http://before.example", ""), {Kind: CacheDir, Dir: "/c"}, srv("http://a.example", "/c"), srv("http://b.example", "/own"), {Kind: PlainURL, URL: "http://bp.example", Cache: "/c"}}},
		{"cache* without a directory", "cache*;srv*http://a.example", []PathElem{srv("http://a.example", "")}},
		{"srv*DIR: a local store tree", "srv*/store;srv*/c*/store2", []PathElem{{Kind: StoreDir, Dir: "/store"}, {Kind: StoreDir, Dir: "/store2"}}},
		{"keywords in any case", "Cache*/c;SrV*HTTPS://A.example", []PathElem{{Kind: CacheDir, Dir: "/c"}, srv("HTTPS://A.example", "/c")}},
		{"plain directory and URL", `/plain/dir; ;c:\syms;https://bp.example/`, []PathElem{{Kind: PlainDir, Dir: "/plain/dir"}, {Kind: PlainDir, Dir: `c:\syms`}, {Kind: PlainURL, URL: "https://bp.example"}}},
		// Where symsrc and dump_syms differed: dump_syms' rules won.
		{"bare srv: Microsoft's server (was skipped by symsrc)", "srv", []PathElem{srv(DefaultSymbolServer, "")}},
		{"srv* alone: Microsoft's server (was the directory \"\" in symsrc)", "SRV*", []PathElem{srv(DefaultSymbolServer, "")}},
		{"symsrv*DLL alone: Microsoft's server", "symsrv*symsrv.dll", []PathElem{srv(DefaultSymbolServer, "")}},
		{"srv with a cache and no server", "srv*/c*", []PathElem{srv(DefaultSymbolServer, "/c")}},
		{"line breaks separate (symsrc split on ';' only)", "srv*~/symcache*http://a.example;\nsrv*http://b.example\r\n/d",
			[]PathElem{srv("http://a.example", home+"/symcache"), srv("http://b.example", ""), {Kind: PlainDir, Dir: "/d"}}},
		{"parts trimmed (symsrc kept their spaces)", " srv * /c * https://a.example/ ", []PathElem{srv("https://a.example", "/c")}},
		{"~ is the home directory (dump_syms only before)", "cache*~;srv*~/store;~/plain", []PathElem{{Kind: CacheDir, Dir: home}, {Kind: StoreDir, Dir: home + "/store"}, {Kind: PlainDir, Dir: home + "/plain"}}},
		{"~user is not expanded", "~user/x", []PathElem{{Kind: PlainDir, Dir: "~user/x"}}},
	} {
		if got := ParseSymbolPath(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ParseSymbolPath(%q) = %+v, want %+v", c.why, c.in, got, c.want)
		}
	}
}

// FuzzParseSymbolPath checks that any symbol path parses without a panic
// into elements whose fields fit their kind.
func FuzzParseSymbolPath(f *testing.F) {
	for _, s := range []string{"srv", "srv*", "srv*/c*https://a.example/", "cache*~;symsrv*x*y*http://b", "/d;\n;http://e", "symsrv*", "srv***", "*;*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		for _, e := range ParseSymbolPath(spec) {
			switch e.Kind {
			case SymbolServer, PlainURL:
				if e.URL == "" || e.Dir != "" || strings.HasSuffix(e.URL, "/") {
					t.Fatalf("%q: %+v", spec, e)
				}
			case StoreDir, CacheDir, PlainDir:
				if e.Dir == "" || e.URL != "" || e.Cache != "" {
					t.Fatalf("%q: %+v", spec, e)
				}
			default:
				t.Fatalf("%q: kind %d", spec, e.Kind)
			}
		}
	})
}
