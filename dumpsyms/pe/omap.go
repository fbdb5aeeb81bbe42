package pe

import (
	"cmp"
	"slices"

	"github.com/gobreakpad/gobreakpad/pdb"
)

// addrRange is a range of RVAs.
type addrRange struct{ rva, length uint32 }

func (r addrRange) end() uint32 { return r.rva + r.length }

// mappedRange is a piece of the original image and where it landed in the
// final image after the code was reordered (OMAP), with the bytes injected
// after it in the final image and removed after it from the original.
type mappedRange struct {
	orig, tran        uint32
	length            uint32
	injected, removed uint32
}

// imageMap maps ranges of the original (pre-OMAP) image to the final one,
// with Breakpad's rules (common/windows/omap.cc): ranges are clipped
// piecewise, and pieces adjacent in the final image merge.
type imageMap struct {
	mapping   []mappedRange // by orig
	endpoints []endpoint
	// subsequent maps an OMAP-from entry's original RVA to the next one's.
	subsequent map[uint32]uint32
}

type endpoint struct {
	at    uint32
	index int
}

// newImageMap builds the map from the OMAP tables and the original image's
// length; nil when the PDB has no OMAP.
func newImageMap(from, to []pdb.OMAP, lengthOriginal uint32) *imageMap {
	if len(from) == 0 || len(to) == 0 {
		return nil
	}
	m := &imageMap{subsequent: map[uint32]uint32{}}
	if to[0].From > 0 && from[0].From > 0 {
		ht, ho := to[0].From, from[0].From
		h := min(ht, ho)
		m.mapping = append(m.mapping, mappedRange{length: h, injected: ht - h, removed: ho - h})
	}
	for i, o := range to {
		// o.From is the transformed RVA, o.To the original.
		if o.To >= lengthOriginal {
			continue
		}
		var length uint32
		if i+1 < len(to) {
			length = to[i+1].From - o.From
			if o.To+length > lengthOriginal {
				length = lengthOriginal - o.To
			}
		} else {
			length = lengthOriginal - o.To
		}
		if length == 0 {
			continue
		}
		if n := len(m.mapping); n > 0 {
			prev := &m.mapping[n-1]
			prev.injected += o.From - (prev.tran + prev.length)
		}
		m.mapping = append(m.mapping, mappedRange{orig: o.To, tran: o.From, length: length})
	}
	slices.SortStableFunc(m.mapping, func(a, b mappedRange) int {
		if a.orig != b.orig {
			if a.orig < b.orig {
				return -1
			}
			return 1
		}
		if a.length < b.length {
			return -1
		} else if a.length > b.length {
			return 1
		}
		return 0
	})
	// Fill in the removed lengths.
	fill := 0
	var front uint32
	for find := range m.mapping {
		if front < m.mapping[find].orig {
			removed := m.mapping[find].orig - front
			for ; fill < find; fill++ {
				if m.mapping[fill].orig+m.mapping[fill].length != front {
					continue
				}
				m.mapping[fill].removed = removed
			}
		}
		front = m.mapping[find].orig + m.mapping[find].length
	}
	// The endpoint index: for each endpoint, the first mapping range
	// covering it.
	var pts []uint32
	for _, r := range m.mapping {
		pts = append(pts, r.orig, r.orig+r.length+r.removed)
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	m.endpoints = make([]endpoint, len(pts))
	for i, p := range pts {
		m.endpoints[i] = endpoint{p, len(m.mapping)}
	}
	for i, r := range m.mapping {
		a, _ := slices.BinarySearchFunc(m.endpoints, r.orig, func(e endpoint, v uint32) int { return cmp.Compare(e.at, v) })
		b, _ := slices.BinarySearchFunc(m.endpoints, r.orig+r.length+r.removed, func(e endpoint, v uint32) int { return cmp.Compare(e.at, v) })
		for ; a < b; a++ {
			m.endpoints[a].index = min(i, m.endpoints[a].index)
		}
	}
	for i := 0; i+1 < len(from); i++ {
		if from[i].From >= from[i+1].From {
			clear(m.subsequent)
			break
		}
		m.subsequent[from[i].From] = from[i+1].From
	}
	return m
}

func clip(q addrRange, mr *mappedRange) {
	if q.end() <= mr.orig || mr.orig+mr.length+mr.removed <= q.rva {
		mr.length, mr.injected, mr.removed = 0, 0, 0
		return
	}
	if mr.orig < q.rva {
		left := q.rva - mr.orig
		mr.orig += left
		mr.tran += left
		if left > mr.length {
			trim := left - mr.length
			mr.length = 0
			mr.injected -= min(trim, mr.injected)
			mr.removed -= trim
		} else {
			mr.length -= left
		}
	}
	endOrig := mr.orig + mr.length
	if q.end() < endOrig {
		mr.length -= endOrig - q.end()
		mr.injected, mr.removed = 0, 0
		return
	}
	if endRemoved := endOrig + mr.removed; q.end() < endRemoved {
		mr.removed = q.end() - endOrig
	}
	if endInjected := endOrig + mr.injected; q.end() < endInjected {
		mr.injected = q.end() - endOrig
	}
}

// mapRange maps an original range to the final image's ranges; without
// OMAP it is the range itself.
func (m *imageMap) mapRange(r addrRange) []addrRange {
	if m == nil || len(m.mapping) == 0 {
		return []addrRange{r}
	}
	q := r
	if q.length == 0 {
		q.length = 1
	}
	imin := len(m.mapping)
	i1, _ := slices.BinarySearchFunc(m.endpoints, q.rva, func(e endpoint, v uint32) int { return cmp.Compare(e.at, v) })
	if i1 < len(m.endpoints) {
		if i1 > 0 && q.rva < m.endpoints[i1].at {
			i1--
		}
		imin = m.endpoints[i1].index
	}
	imax, _ := slices.BinarySearchFunc(m.mapping, q.end(), func(e mappedRange, v uint32) int {
		if e.orig < v {
			return -1
		}
		if e.orig > v {
			return 1
		}
		// (orig equal: {end, length 0} sorts before any longer range)
		if e.length > 0 {
			return 1
		}
		return 0
	})
	var tmp []mappedRange
	for i := imin; i < imax; i++ {
		mr := m.mapping[i]
		clip(q, &mr)
		if mr.length+mr.injected > 0 {
			tmp = append(tmp, mr)
		}
	}
	if len(tmp) == 0 {
		return nil
	}
	slices.SortStableFunc(tmp, func(a, b mappedRange) int {
		if c := cmp.Compare(a.tran, b.tran); c != 0 {
			return c
		}
		return cmp.Compare(a.length, b.length)
	})
	var out []addrRange
	if r.length == 0 {
		out = append(out, addrRange{tmp[0].tran, 0})
		for _, t := range tmp[1:] {
			if t.tran > out[len(out)-1].rva {
				out = append(out, addrRange{t.tran, 0})
			}
		}
		return out
	}
	begin := tmp[0].tran
	content := begin + tmp[0].length
	injected := content + tmp[0].injected
	for _, t := range tmp[1:] {
		if injected < t.tran {
			if begin < content {
				out = append(out, addrRange{begin, content - begin})
			}
			begin = t.tran
		}
		content = t.tran + t.length
		injected = content + t.injected
	}
	if begin < content {
		out = append(out, addrRange{begin, content - begin})
	}
	return out
}
