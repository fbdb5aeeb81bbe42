package golden

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Report is what a run over many dumps found: every dump's status, the
// signatures with their counts, and the counts of each status. Its JSON form
// (WriteJSON) is cmd/crashdiff's --json report.
type Report struct {
	Dumps      []DumpReport     `json:"dumps"`
	Signatures []SignatureCount `json:"signatures"`
	Counts     map[Status]int   `json:"counts"`
}

// DumpReport is one dump of a Report.
type DumpReport struct {
	Dump   string `json:"dump"`
	Status Status `json:"status"`
	// Signature is this walk's signature.
	Signature string `json:"signature,omitempty"`
	// OldSignature is the golden record's signature when it differs.
	OldSignature string `json:"old_signature,omitempty"`
	// Error is why the dump could not be walked.
	Error string   `json:"error,omitempty"`
	Diff  []string `json:"diff,omitempty"`
}

// SignatureCount is a signature of a Report with the dumps that have it.
type SignatureCount struct {
	Signature string   `json:"signature"`
	Count     int      `json:"count"`
	Dumps     []string `json:"dumps"`
}

// Unreadable stands for the signature of the dumps that could not be walked
// in a Report's signatures.
const Unreadable = "(dump could not be walked)"

// NewReport makes the report of the results (sorted by dump name in
// place): the dumps in that order, the signatures of the walked dumps most
// frequent first (then by name).
func NewReport(results []*Result) *Report {
	sort.Slice(results, func(i, j int) bool { return results[i].Dump < results[j].Dump })
	rep := &Report{Counts: map[Status]int{}}
	bySig := map[string]*SignatureCount{}
	for _, r := range results {
		d := DumpReport{Dump: r.Dump, Status: r.Status, Diff: r.Diff}
		if r.Record != nil {
			d.Signature, d.Error = r.Record.Signature, r.Record.Error
		}
		if r.Golden != nil && (r.Record == nil || r.Golden.Signature != r.Record.Signature) {
			d.OldSignature = r.Golden.Signature
		}
		rep.Dumps = append(rep.Dumps, d)
		rep.Counts[r.Status]++
		if r.Record == nil {
			continue
		}
		sig := r.Record.Signature
		if r.Record.Error != "" {
			sig = Unreadable
		}
		s := bySig[sig]
		if s == nil {
			s = &SignatureCount{Signature: sig}
			bySig[sig] = s
		}
		s.Count++
		s.Dumps = append(s.Dumps, r.Dump)
	}
	for _, s := range bySig {
		rep.Signatures = append(rep.Signatures, *s)
	}
	sort.Slice(rep.Signatures, func(i, j int) bool {
		a, b := rep.Signatures[i], rep.Signatures[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Signature < b.Signature
	})
	return rep
}

// Differs tells whether any dump is changed, new, missing or failed.
func (rep *Report) Differs() bool {
	return rep.Counts[Changed]+rep.Counts[New]+rep.Counts[Missing]+rep.Counts[Failed] > 0
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes one line per dump (status and name; changed dumps with
// their diff indented below, unreadable ones with the error), then the
// table of signatures and a summary line.
func (rep *Report) WriteText(w io.Writer) error {
	for _, d := range rep.Dumps {
		fmt.Fprintf(w, "%-9s  %s\n", d.Status, d.Dump)
		if d.Error != "" && d.Status != Unchanged {
			fmt.Fprintf(w, "    error: %s\n", oneLine(d.Error))
		}
		for _, l := range d.Diff {
			fmt.Fprintf(w, "    %s\n", oneLine(l))
		}
	}
	if len(rep.Dumps) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "dumps\tsignature\n")
	for _, s := range rep.Signatures {
		fmt.Fprintf(tw, "%d\t%s\n", s.Count, oneLine(s.Signature))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var parts []string
	for _, st := range []Status{Unchanged, Changed, New, Missing, Written, Removed, Walked, Failed} {
		if n := rep.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	_, err := fmt.Fprintf(w, "\n%d dumps: %s; %d signatures\n", len(rep.Dumps), strings.Join(parts, ", "), len(rep.Signatures))
	return err
}

// oneLine keeps a text on one line (and tabs out of the tabwriter's way).
func oneLine(s string) string { return oneLiner.Replace(s) }

var oneLiner = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)
