package minidump

import (
	"fmt"
	"strconv"
)

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
