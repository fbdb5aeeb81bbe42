package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// The triage of signatures (issue 38): their state per product, bug links
// and history on the signature page and in GET /api/signature, changed by
//
//	POST /api/signature/triage  JSON {"product", "signature", "state",
//	                            "fixed_in", "bug", "remove_bug"} (scope triage)
//	POST /signature/triage      the signature page's forms, the same
//	                            fields and csrf (scope triage)
//
// and the home page's state filter (state=) and marks.

// TriageRequest is a change of a signature's triage: any of a state (with
// fixed_in for resolved), a bug link to add, one to remove.
type TriageRequest struct {
	Product   string `json:"product"`
	Signature string `json:"signature"`
	State     string `json:"state,omitempty"`
	FixedIn   string `json:"fixed_in,omitempty"`
	Bug       string `json:"bug,omitempty"`
	RemoveBug string `json:"remove_bug,omitempty"`
}

// FileBugLink is a "file a bug" link of a configured tracker.
type FileBugLink struct {
	Tracker string `json:"tracker"`
	URL     string `json:"url"`
}

// maxTriageBody bounds a triage request's body.
const maxTriageBody = 64 << 10

func (w *Web) registerTriage(mux auth.Mux) {
	mux.HandleFunc("POST /api/signature/triage", w.triageAPI)
	mux.HandleFunc("POST /signature/triage", w.triagePage)
}

// applyTriage makes the change req asks for, as p.
func (w *Web) applyTriage(ctx context.Context, req TriageRequest, p *principal) (index.SignatureTriage, error) {
	if w.st == nil {
		return index.SignatureTriage{}, httpErr(http.StatusServiceUnavailable, "the index keeps no triage")
	}
	if req.Signature == "" {
		return index.SignatureTriage{}, httpErr(http.StatusBadRequest, "signature is required")
	}
	who := ""
	if p != nil {
		who = p.Name
	}
	t, err := w.st.UpdateTriage(ctx, index.TriageUpdate{Product: req.Product, Signature: req.Signature, State: index.State(req.State),
		FixedIn: strings.TrimSpace(req.FixedIn), AddBug: strings.TrimSpace(req.Bug), RemoveBug: req.RemoveBug, Who: who})
	switch {
	case errors.Is(err, index.ErrBadTriage):
		return t, httpErr(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), index.ErrBadTriage.Error()+": "))
	case errors.Is(err, index.ErrNotFound):
		return t, httpErr(http.StatusNotFound, "%s", strings.TrimPrefix(err.Error(), index.ErrNotFound.Error()+": "))
	case err != nil:
		return t, err
	}
	w.log.Info("web: triage", "product", req.Product, "signature", req.Signature, "state", string(t.State), "fixed_in", t.FixedIn,
		"bug", req.Bug, "remove_bug", req.RemoveBug, "token", who)
	return t, nil
}

func (w *Web) triageAPI(rw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(rw, r.Body, maxTriageBody)
	var req TriageRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		w.writeErr(rw, httpErr(http.StatusBadRequest, "a JSON object {product, signature, state, fixed_in, bug, remove_bug}: %v", err))
		return
	}
	t, err := w.applyTriage(r.Context(), req, who(r))
	if err != nil {
		w.triageErr(r, err)
		w.writeErr(rw, err)
		return
	}
	auth.WriteJSON(rw, http.StatusOK, t)
}

func (w *Web) triageErr(r *http.Request, err error) {
	var e *errStatus
	if !errors.As(err, &e) {
		w.log.Error("web: triage", "path", r.URL.Path, "err", err)
	}
}

// triagePage takes the signature page's forms and returns to the page.
func (w *Web) triagePage(rw http.ResponseWriter, r *http.Request) {
	securityHeaders(rw.Header())
	r.Body = http.MaxBytesReader(rw, r.Body, maxTriageBody)
	p := who(r)
	if err := r.ParseForm(); err != nil {
		w.render(rw, http.StatusBadRequest, layout{Page: "error", Who: p, Error: "a form: " + err.Error()})
		return
	}
	if !checkCSRF(r, p) {
		w.render(rw, http.StatusForbidden, layout{Page: "error", Who: p, Error: "the form's csrf field does not match the session"})
		return
	}
	f := r.PostForm
	req := TriageRequest{Product: f.Get("product"), Signature: f.Get("signature"), State: f.Get("state"), FixedIn: f.Get("fixed_in"),
		Bug: f.Get("bug"), RemoveBug: f.Get("remove_bug")}
	if req.State != string(index.StateResolved) && req.State != string(index.StateRegressed) {
		req.FixedIn = "" // the form's field, left over from another state
	}
	if _, err := w.applyTriage(r.Context(), req, p); err != nil {
		w.triageErr(r, err)
		w.render(rw, statusOf(err), layout{Page: "error", Who: p, Error: err.Error()})
		return
	}
	http.Redirect(rw, r, "/signature?"+url.Values{"signature": {req.Signature}, "product": {req.Product}}.Encode()+"#triage", http.StatusSeeOther)
}

// signatureTriage adds the triage to a signature's data: the product's
// (the filter's, or the signature's only one), the states per product,
// the "file a bug" links.
func (w *Web) signatureTriage(ctx context.Context, d *SignatureData, product string, p *principal) error {
	if w.st == nil {
		return nil
	}
	m, err := w.st.TriageOf(ctx, "", []string{d.Signature})
	if err != nil {
		return err
	}
	d.Products = m[d.Signature]
	if d.Products == nil {
		d.Products = []index.ProductTriage{}
	}
	if product == "" && len(d.Products) == 1 {
		product = d.Products[0].Product
	}
	d.CanTriage = p.Can(auth.ScopeTriage)
	d.States = index.States
	found := false
	for _, pt := range d.Products {
		found = found || pt.Product == product
	}
	if !found {
		return nil
	}
	t, err := w.st.SignatureTriage(ctx, product, d.Signature)
	if errors.Is(err, index.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	d.Triage = &t
	d.FileBug = w.fileBugLinks(d, product)
	return nil
}

// fileBugLinks are the configured trackers' new-issue links for a
// signature: its name, most common crash reason, top frames and newest
// report.
func (w *Web) fileBugLinks(d *SignatureData, product string) []FileBugLink {
	if len(w.cfg.BugTrackers) == 0 {
		return nil
	}
	base := strings.TrimSuffix(w.cfg.PublicURL, "/")
	var b strings.Builder
	fmt.Fprintf(&b, "Crash signature: %s\nProduct: %s\n", d.Signature, product)
	for _, h := range d.Histograms {
		if h.Field != "crash_reason" {
			continue
		}
		for _, c := range h.Buckets {
			if c.Value != "" { // the most common reason given
				fmt.Fprintf(&b, "Crash reason: %s\n", c.Value)
				break
			}
		}
	}
	fmt.Fprintf(&b, "Crashes in the last %d days: %d\n", d.Period, d.Count)
	if d.Stack != nil && len(d.Stack.Frames) > 0 {
		b.WriteString("\nTop frames of the crashing thread:\n")
		for i, f := range d.Stack.Frames {
			fmt.Fprintf(&b, "%d  %s\n", i, f)
		}
	}
	b.WriteString("\n")
	if len(d.Reports) > 0 {
		fmt.Fprintf(&b, "Report: %s/report/%s\n", base, d.Reports[0].ID)
	}
	fmt.Fprintf(&b, "Signature: %s/signature?%s\n", base, url.Values{"signature": {d.Signature}, "product": {product}}.Encode())
	title := "Crash in " + d.Signature
	var out []FileBugLink
	for _, t := range w.cfg.BugTrackers {
		out = append(out, FileBugLink{Tracker: t.Name, URL: t.NewIssueURL(title, b.String())})
	}
	return out
}

// parseState reads the home page's state= (empty: every state).
func parseState(v url.Values) (index.State, error) {
	s := v.Get("state")
	if s == "" {
		return "", nil
	}
	st, err := index.ParseState(s)
	if err != nil {
		return "", httpErr(http.StatusBadRequest, "state=%q: one of untriaged, open, resolved, regressed, ignored", s)
	}
	return st, nil
}
