package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// report is what crashdiff prints: every dump's status, the signatures with
// their counts, and the counts of each status.
type report struct {
	Dumps      []dumpReport      `json:"dumps"`
	Signatures []signatureReport `json:"signatures"`
	Counts     map[string]int    `json:"counts"`
}

type dumpReport struct {
	Dump         string   `json:"dump"`
	Status       string   `json:"status"`
	Signature    string   `json:"signature,omitempty"`
	OldSignature string   `json:"old_signature,omitempty"`
	Error        string   `json:"error,omitempty"`
	Diff         []string `json:"diff,omitempty"`
}

type signatureReport struct {
	Signature string   `json:"signature"`
	Count     int      `json:"count"`
	Dumps     []string `json:"dumps"`
}

// unreadable groups the dumps that could not be walked in the table.
const unreadable = "(dump could not be walked)"

func newReport(results []*result) *report {
	rep := &report{Counts: map[string]int{}}
	bySig := map[string]*signatureReport{}
	for _, r := range results {
		d := dumpReport{Dump: r.key, Status: r.status, Diff: r.diff}
		if r.rec != nil {
			d.Signature, d.Error = r.rec.Signature, r.rec.Error
		}
		if r.old != nil && (r.rec == nil || r.old.Signature != r.rec.Signature) {
			d.OldSignature = r.old.Signature
		}
		rep.Dumps = append(rep.Dumps, d)
		rep.Counts[r.status]++
		if r.rec == nil {
			continue
		}
		sig := r.rec.Signature
		if r.rec.Error != "" {
			sig = unreadable
		}
		s := bySig[sig]
		if s == nil {
			s = &signatureReport{Signature: sig}
			bySig[sig] = s
		}
		s.Count++
		s.Dumps = append(s.Dumps, r.key)
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

func (rep *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeText prints one line per dump (status and name; changed dumps with
// their diff indented below, unreadable ones with the error), then the
// table of signatures and a summary line.
func (rep *report) writeText(w io.Writer) error {
	for _, d := range rep.Dumps {
		fmt.Fprintf(w, "%-9s  %s\n", d.Status, d.Dump)
		if d.Error != "" && d.Status != statusUnchanged {
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
	for _, st := range []string{statusUnchanged, statusChanged, statusNew, statusMissing, statusWritten, statusRemoved, statusWalked} {
		if n := rep.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	_, err := fmt.Fprintf(w, "\n%d dumps: %s; %d signatures\n", len(rep.Dumps), strings.Join(parts, ", "), len(rep.Signatures))
	return err
}

// oneLine keeps a text on one line (and tabs out of the tabwriter's way).
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}
