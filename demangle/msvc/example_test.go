package msvc_test

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/demangle/msvc"
)

func ExampleDemangle() {
	for _, style := range []msvc.Style{msvc.Full, msvc.Mozilla} {
		s, err := msvc.Demangle("?f@S@ns@@QAEHPBD@Z", style)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s)
	}
	// Output:
	// public: int __thiscall ns::S::f(char const *)
	// ns::S::f(char const*)
}
