package dumptext

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// printSystemInfo prints MinidumpSystemInfo::Print.
func (d *dumper) printSystemInfo(si *minidump.SystemInfo) {
	x86info := si.ProcessorArchitecture == minidump.ArchX86 || si.ProcessorArchitecture == minidump.ArchX86Win64
	d.printf("MDRawSystemInfo\n")
	d.printf("  processor_architecture                     = 0x%x (%s)\n", uint16(si.ProcessorArchitecture), si.CPUName())
	d.printf("  processor_level                            = %d\n", si.ProcessorLevel)
	d.printf("  processor_revision                         = 0x%x\n", si.ProcessorRevision)
	d.printf("  number_of_processors                       = %d\n", si.NumberOfProcessors)
	d.printf("  product_type                               = %d\n", si.ProductType)
	d.printf("  major_version                              = %d\n", int32(si.MajorVersion))
	d.printf("  minor_version                              = %d\n", int32(si.MinorVersion))
	d.printf("  build_number                               = %d\n", int32(si.BuildNumber))
	d.printf("  platform_id                                = 0x%x (%s)\n", uint32(si.PlatformID), si.OSName())
	d.printf("  csd_version_rva                            = 0x%x\n", si.CSDVersionRva)
	d.printf("  suite_mask                                 = 0x%x\n", si.SuiteMask)
	if x86info {
		d.printf("  cpu.x86_cpu_info (valid):\n")
	} else {
		d.printf("  cpu.x86_cpu_info (invalid):\n")
	}
	xi := si.X86CPUInfo()
	for i, v := range xi.VendorID {
		d.printf("  cpu.x86_cpu_info.vendor_id[%d]              = 0x%x\n", i, v)
	}
	d.printf("  cpu.x86_cpu_info.version_information       = 0x%x\n", xi.VersionInformation)
	d.printf("  cpu.x86_cpu_info.feature_information       = 0x%x\n", xi.FeatureInformation)
	d.printf("  cpu.x86_cpu_info.amd_extended_cpu_features = 0x%x\n", xi.AMDExtendedCPUFeatures)
	if !x86info {
		d.printf("  cpu.other_cpu_info (valid):\n")
		for i, v := range si.OtherCPUInfo() {
			d.printf("  cpu.other_cpu_info.processor_features[%d]   = 0x%x\n", i, v)
		}
	}
	if si.CSDVersionErr != nil {
		d.printf("  (csd_version)                              = (null)\n")
	} else {
		d.printf("  (csd_version)                              = \"%s\"\n", cstr(si.CSDVersion))
	}
	if x86info {
		d.printf("  (cpu_vendor)                               = \"%s\"\n", cstr(xi.Vendor()))
	} else {
		d.printf("  (cpu_vendor)                               = (null)\n")
	}
	d.printf("\n")
}

// systemTime formats a SYSTEMTIME as Breakpad's misc info printer does.
func systemTime(t minidump.SystemTime) string {
	return fmt.Sprintf("%04d-%02d-%02d (%d) %02d:%02d:%02d.%03d",
		t.Year, t.Month, t.Day, t.DayOfWeek, t.Hour, t.Minute, t.Second, t.Milliseconds)
}

// printMiscInfo prints MinidumpMiscInfo::Print: the fields of every version
// the stream's size covers, "(invalid)" where Flags1 says so.
func (d *dumper) printMiscInfo(m *minidump.MiscInfo) {
	f := m.Flags1
	d.printf("MDRawMiscInfo\n")
	d.printf("  size_of_info                 = %d\n", int32(m.SizeOfInfo))
	d.printf("  flags1                       = 0x%x\n", f)
	d.printf("  process_id                   = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessID != 0, false, m.ProcessID))
	if f&minidump.MiscInfoProcessTimes != 0 {
		d.printf("  process_create_time          = 0x%x %s\n", m.ProcessCreateTime, utc(m.ProcessCreateTime))
	} else {
		d.printf("  process_create_time          = (invalid)\n")
	}
	times := f&minidump.MiscInfoProcessTimes != 0
	d.printf("  process_user_time            = %s\n", valueOrInvalid(times, false, m.ProcessUserTime))
	d.printf("  process_kernel_time          = %s\n", valueOrInvalid(times, false, m.ProcessKernelTime))
	if m.SizeOfInfo > minidump.MiscInfoSize {
		power := f&minidump.MiscInfoProcessorPowerInfo != 0
		d.printf("  processor_max_mhz            = %s\n", valueOrInvalid(power, false, m.ProcessorMaxMhz))
		d.printf("  processor_current_mhz        = %s\n", valueOrInvalid(power, false, m.ProcessorCurrentMhz))
		d.printf("  processor_mhz_limit          = %s\n", valueOrInvalid(power, false, m.ProcessorMhzLimit))
		d.printf("  processor_max_idle_state     = %s\n", valueOrInvalid(power, false, m.ProcessorMaxIdleState))
		d.printf("  processor_current_idle_state = %s\n", valueOrInvalid(power, false, m.ProcessorCurrentIdleState))
	}
	if m.SizeOfInfo > minidump.MiscInfo2Size {
		d.printf("  process_integrity_level      = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessIntegrity != 0, true, m.ProcessIntegrityLevel))
		d.printf("  process_execute_flags        = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessExecuteFlag != 0, true, m.ProcessExecuteFlags))
		d.printf("  protected_process            = %s\n", valueOrInvalid(f&minidump.MiscInfoProtectedProcess != 0, false, m.ProtectedProcess))
		tz := f&minidump.MiscInfoTimezone != 0
		d.printf("  time_zone_id                 = %s\n", valueOrInvalid(tz, false, m.TimeZoneID))
		if tz {
			z := &m.TimeZone
			d.printf("  time_zone.bias               = %d\n", z.Bias)
			d.printf("  time_zone.standard_name      = %s\n", cstr(minidump.UTF16String(z.StandardName[:])))
			d.printf("  time_zone.standard_date      = %s\n", systemTime(z.StandardDate))
			d.printf("  time_zone.standard_bias      = %d\n", z.StandardBias)
			d.printf("  time_zone.daylight_name      = %s\n", cstr(minidump.UTF16String(z.DaylightName[:])))
			d.printf("  time_zone.daylight_date      = %s\n", systemTime(z.DaylightDate))
			d.printf("  time_zone.daylight_bias      = %d\n", z.DaylightBias)
		} else {
			for _, n := range []string{"bias         ", "standard_name", "standard_date", "standard_bias",
				"daylight_name", "daylight_date", "daylight_bias"} {
				d.printf("  time_zone.%s      = (invalid)\n", n)
			}
		}
	}
	if m.SizeOfInfo > minidump.MiscInfo3Size {
		if f&minidump.MiscInfoBuildString != 0 {
			d.printf("  build_string                 = %s\n", cstr(minidump.UTF16String(m.BuildString[:])))
			d.printf("  dbg_bld_str                  = %s\n", cstr(minidump.UTF16String(m.DbgBldStr[:])))
		} else {
			d.printf("  build_string                 = (invalid)\n")
			d.printf("  dbg_bld_str                  = (invalid)\n")
		}
	}
	if m.SizeOfInfo > minidump.MiscInfo4Size {
		if f&minidump.MiscInfoProcessCookie != 0 {
			x := &m.XStateData
			d.printf("  xstate_data.size_of_info     = %d\n", int32(x.SizeOfInfo))
			d.printf("  xstate_data.context_size     = %d\n", int32(x.ContextSize))
			d.printf("  xstate_data.enabled_features = 0x%x\n", x.EnabledFeatures)
			for i, ft := range x.Features {
				if x.EnabledFeatures>>i&1 != 0 {
					d.printf("  xstate_data.features[%02d]     = { %d, %d }\n", i, int32(ft.Offset), int32(ft.Size))
				}
			}
			if x.EnabledFeatures == 0 {
				d.printf("  xstate_data.features[]       = (empty)\n")
			}
			d.printf("  process_cookie               = %d\n", int32(m.ProcessCookie))
		} else {
			d.printf("  xstate_data.size_of_info     = (invalid)\n")
			d.printf("  xstate_data.context_size     = (invalid)\n")
			d.printf("  xstate_data.enabled_features = (invalid)\n")
			d.printf("  xstate_data.features[]       = (invalid)\n")
			d.printf("  process_cookie               = (invalid)\n")
		}
	}
	d.printf("\n")
}
