package stackwalk

// SetMinFrameBudget lowers the least frame budget of a dump (tests cut
// small dumps with it) and returns a function restoring it.
func SetMinFrameBudget(n int) (restore func()) {
	old := minFrameBudget
	minFrameBudget = n
	return func() { minFrameBudget = old }
}
