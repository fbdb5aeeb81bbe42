package symfile

// blocks is an append-only list of T kept in blocks that never move, so
// that the indexing pass collects records without the copies and the
// garbage of a doubling slice (in a short-lived process the collector may
// never run, so every byte allocated stays resident), and pointers to its
// elements stay valid. Blocks grow from blockMin to blockMax elements.
type blocks[T any] struct {
	full [][]T
	cur  []T
	n    int
}

const (
	blockMin = 64
	blockMax = 4 << 10
)

func (b *blocks[T]) add(v T) {
	if len(b.cur) == cap(b.cur) {
		size := blockMin
		if b.cur != nil {
			b.full = append(b.full, b.cur)
			size = min(2*cap(b.cur), blockMax)
		}
		b.cur = make([]T, 0, size)
	}
	b.cur = append(b.cur, v)
	b.n++
}

// last returns the element added last; b must not be empty.
func (b *blocks[T]) last() *T { return &b.cur[len(b.cur)-1] }

// appendTo appends the elements in order to dst.
func (b *blocks[T]) appendTo(dst []T) []T {
	for _, f := range b.full {
		dst = append(dst, f...)
	}
	return append(dst, b.cur...)
}

// slice returns the elements in one slice: the only block itself when there
// is one, else a new slice of exactly their number.
func (b *blocks[T]) slice() []T {
	if len(b.full) == 0 {
		return b.cur
	}
	return b.appendTo(make([]T, 0, b.n))
}
