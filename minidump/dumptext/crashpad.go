package dumptext

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// printCrashpadInfo prints MinidumpCrashpadInfo::Print.
func (d *dumper) printCrashpadInfo(c *minidump.CrashpadInfo) {
	d.printf("MDRawCrashpadInfo\n")
	d.printf("  version = %d\n", int32(c.Version))
	d.printf("  report_id = %s\n", c.ReportID)
	d.printf("  client_id = %s\n", c.ClientID)
	for _, a := range c.SimpleAnnotations {
		d.printf("  simple_annotations[\"%s\"] = %s\n", cstr(a.Key), cstr(a.Value))
	}
	for i, m := range c.Modules {
		d.printf("  module_list[%d].minidump_module_list_index = %d\n", i, int32(m.ModuleListIndex))
		d.printf("  module_list[%d].version = %d\n", i, int32(m.Version))
		for j, s := range m.ListAnnotations {
			d.printf("  module_list[%d].list_annotations[%d] = %s\n", i, j, cstr(s))
		}
		for _, a := range m.SimpleAnnotations {
			d.printf("  module_list[%d].simple_annotations[\"%s\"] = %s\n", i, cstr(a.Key), cstr(a.Value))
		}
		for _, o := range m.AnnotationObjects {
			var v string
			if o.Type == 1 {
				v = cstr(string(o.Value))
			} else {
				v = fmt.Sprintf("%X", o.Value)
			}
			d.printf("  module_list[%d].crashpad_annotations[\"%s\"] (type = %d) = %s\n", i, cstr(o.Name), o.Type, v)
		}
		d.printf("  address_mask = %d\n", c.AddressMask)
	}
	d.printf("\n")
}

// rawStream prints a Linux text stream as Breakpad's DumpRawStream: the text
