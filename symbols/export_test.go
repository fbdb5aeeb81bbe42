package symbols

// Cancel is the first half of Stop: no more loads start.
func (p *Prefetch) Cancel() { p.stop.Store(true) }
