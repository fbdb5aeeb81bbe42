//go:build race

package breakpad_test

// raceBuild is set in -race builds, which leave the corpus's big file out.
const raceBuild = true
