// Package hostile holds no code: its test runs the built command-line
// programs on the hostile inputs of ../shared/corpus/hostile (and on
// inputs it generates) and checks what docs/hostile.md promises for each:
// no panic, the documented exit status, a message naming what is wrong,
// output under a bound, and wall time and peak memory (the child's rusage)
// under generous bounds.
package hostile
