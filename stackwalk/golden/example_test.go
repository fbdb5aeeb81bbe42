package golden_test

import (
	"log"
	"os"

	"github.com/gobreakpad/gobreakpad/stackwalk/golden"
)

// Write the golden files of a run, then compare a later run with them: one
// dump's crashing frame moved to another line, one dump is new, one is gone.
// (The records are made by hand here; golden.FromWalk makes them from
// stackwalk/batch's walks.)
func ExampleCompare() {
	dir, err := os.MkdirTemp("", "golden")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rec := func(dump, fn string, line int) *golden.Record {
		return &golden.Record{Dump: dump, Signature: fn, Crashed: true, Reason: "SIGSEGV /SEGV_MAPERR", Thread: 0,
			Frames: []golden.Frame{{Module: "app", Function: fn, File: "/src/app.c", Line: line, Trust: "context"}}}
	}
	roots := []string{"dumps"} // the paths walked: batch.Find's roots
	first := []*golden.Result{
		{Dump: "dumps/a.dmp", Record: rec("dumps/a.dmp", "parse", 10)},
		{Dump: "dumps/b.dmp", Record: rec("dumps/b.dmp", "parse", 12)},
		{Dump: "dumps/c.dmp", Record: rec("dumps/c.dmp", "load", 30)},
	}
	if _, err := golden.Update(dir, first, roots); err != nil {
		log.Fatal(err)
	}

	later := []*golden.Result{
		{Dump: "dumps/a.dmp", Record: rec("dumps/a.dmp", "parse", 10)},
		{Dump: "dumps/b.dmp", Record: rec("dumps/b.dmp", "parse", 13)},
		{Dump: "dumps/d.dmp", Record: rec("dumps/d.dmp", "parse", 10)},
	}
	missing, err := golden.Compare(dir, later, roots)
	if err != nil {
		log.Fatal(err)
	}
	rep := golden.NewReport(append(later, missing...))
	if err := rep.WriteText(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// unchanged  dumps/a.dmp
	// changed    dumps/b.dmp
	//     -#0 app!parse /src/app.c:12 [context]
	//     +#0 app!parse /src/app.c:13 [context]
	// missing    dumps/c.dmp
	// new        dumps/d.dmp
	//
	// dumps  signature
	// 3      parse
	//
	// 4 dumps: 1 unchanged, 1 changed, 1 new, 1 missing; 1 signatures
}
