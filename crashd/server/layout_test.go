package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// layoutJS lists what is wrong with the layout of the page shown, as
// docs/crashd.md "Layout" states its rules:
//   - the document is no wider than the window (a wide table scrolls in
//     its own overflow-x wrapper, the page itself never does);
//   - no box outside such a wrapper holds content wider than itself (a
//     histogram's bar running into the next column);
//   - in every table each cell lies under its column's header cell
//     (the first row's cells where there is no thead), within 1 px;
//   - strict (at 1280 and 1400 px, for pages of ordinary crashes): no
//     table needs to scroll at all.
const layoutJS = `((strict) => {
  const bad = [];
  const de = document.documentElement, W = de.clientWidth; // the window less its scroll bar
  if (de.scrollWidth > W) bad.push('document is ' + de.scrollWidth + ' px wide in a ' + W + ' px window');
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '');
  const path = e => { const p = []; for (; e && e !== document.body; e = e.parentElement) p.unshift(name(e)); return p.join(' > '); };
  const scrolls = e => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(e).overflowX);
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).display !== 'none';
  for (const e of document.querySelectorAll('body *')) {
    const d = getComputedStyle(e).display;
    if (d === 'inline' || d === 'none' || d.startsWith('table') || ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'OPTION'].includes(e.tagName) ||
        e instanceof SVGElement || scrolls(e) || !shown(e)) continue;
    let inside = false;
    for (let p = e.parentElement; p && !inside; p = p.parentElement) inside = scrolls(p);
    if (!inside && e.scrollWidth > e.clientWidth + 1)
      bad.push(path(e) + ': content ' + e.scrollWidth + ' px wide overflows its ' + e.clientWidth + ' px');
  }
  if (strict) for (const e of document.querySelectorAll('main .scroll'))
    if (shown(e) && e.scrollWidth > e.clientWidth + 1)
      bad.push(path(e) + ': its table, ' + e.scrollWidth + ' px wide, scrolls in ' + e.clientWidth + ' px');
  for (const t of document.querySelectorAll('main table')) {
    if (!shown(t)) continue;
    const rows = Array.from(t.rows).filter(shown);
    const head = t.tHead && t.tHead.rows.length ? t.tHead.rows[0] : rows[0];
    if (!head) continue;
    const cols = [];
    for (const c of head.cells) for (let k = 0; k < c.colSpan; k++) cols.push(c);
    for (const r of rows) {
      if (r === head || (r.cells.length === 1 && r.cells[0].colSpan === cols.length)) continue;
      let i = 0;
      for (const c of r.cells) {
        const first = cols[i], last = cols[i + c.colSpan - 1];
        i += c.colSpan;
        if (!first || !last) { bad.push(path(t) + ' row ' + r.rowIndex + ': more cells than columns'); break; }
        if (!shown(c) || !shown(first)) continue;
        const a = c.getBoundingClientRect(), L = first.getBoundingClientRect().left, R = last.getBoundingClientRect().right;
        if (Math.abs(a.left - L) > 1 || Math.abs(a.right - R) > 1) {
          bad.push(path(t) + ' row ' + r.rowIndex + ' (' + (r.className || 'plain') + ') cell ' + c.cellIndex + ' "' + c.textContent.trim().slice(0, 40) +
            '" spans ' + Math.round(a.left) + '-' + Math.round(a.right) + ' px, its column ' + Math.round(L) + '-' + Math.round(R) + ' px');
          break;
        }
      }
    }
  }
  return bad.slice(0, 20);
})`

// Widths the layout is checked at: a laptop's window, a phone's, and
// 1400 px, where the signature page's histograms overflowed.
const (
	desktopWidth = 1280
	wideWidth    = 1400
	phoneWidth   = 390
)

// checkLayout checks the page b shows with layoutJS at the phone, wide
// and desktop widths, failing the test with what is wrong. With shots set
// (a directory) it saves crashd-NAME.png (desktopWidth × height) and
// crashd-NAME-phone.png there. Wide tables may scroll in their wrapper
// unless strict. It leaves b at the desktop width.
func checkLayout(t *testing.T, b context.Context, name string, height int64, strict bool, shots string) {
	t.Helper()
	for _, v := range []struct {
		w, h   int64
		suffix string
		strict bool
	}{{phoneWidth, 844, "-phone", false}, {wideWidth, height, "", strict}, {desktopWidth, height, "", strict}} {
		c, cancel := context.WithTimeout(b, 30*time.Second)
		err := chromedp.Do(c, chromedp.EmulateViewport(v.w, v.h))
		var bad []string
		if err == nil {
			bad, err = chromedp.Run(c, chromedp.Evaluate[[]string](fmt.Sprintf("%s(%t)", layoutJS, v.strict)))
		}
		cancel()
		if err != nil {
			t.Fatalf("layout of %s at %d px: %v", name, v.w, err)
		}
		if len(bad) > 0 {
			t.Errorf("layout of %s at %d px:\n\t%s", name, v.w, strings.Join(bad, "\n\t"))
		}
		if shots == "" || v.w == wideWidth {
			continue
		}
		png, err := chromedp.Run(b, chromedp.CaptureScreenshot())
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(shots, "crashd-"+name+v.suffix+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}
