package dumptext

import (
	"github.com/gobreakpad/gobreakpad/internal/textsafe"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// printModules prints MinidumpModuleList::Print: each module's raw fields,
// its CodeView and misc records and the identifiers Breakpad derives.
func (d *dumper) printModules(mods []minidump.Module) {
	d.printf("MinidumpModuleList\n")
	d.printf("  module_count = %d\n", len(mods))
	d.printf("\n")
	for i := range mods {
		m := &mods[i]
		v := &m.VersionInfo
		d.printf("module[%d]\n", i)
		d.printf("MDRawModule\n")
		d.printf("  base_of_image                   = 0x%x\n", m.BaseOfImage)
		d.printf("  size_of_image                   = 0x%x\n", m.SizeOfImage)
		d.printf("  checksum                        = 0x%x\n", m.CheckSum)
		d.printf("  time_date_stamp                 = 0x%x %s\n", m.TimeDateStamp, utc(m.TimeDateStamp))
		d.printf("  module_name_rva                 = 0x%x\n", m.ModuleNameRva)
		d.printf("  version_info.signature          = 0x%x\n", v.Signature)
		d.printf("  version_info.struct_version     = 0x%x\n", v.StructVersion)
		d.printf("  version_info.file_version       = 0x%x:0x%x\n", v.FileVersionHi, v.FileVersionLo)
		d.printf("  version_info.product_version    = 0x%x:0x%x\n", v.ProductVersionHi, v.ProductVersionLo)
		d.printf("  version_info.file_flags_mask    = 0x%x\n", v.FileFlagsMask)
		d.printf("  version_info.file_flags         = 0x%x\n", v.FileFlags)
		d.printf("  version_info.file_os            = 0x%x\n", v.FileOS)
		d.printf("  version_info.file_type          = 0x%x\n", v.FileType)
		d.printf("  version_info.file_subtype       = 0x%x\n", v.FileSubtype)
		d.printf("  version_info.file_date          = 0x%x:0x%x\n", v.FileDateHi, v.FileDateLo)
		d.printf("  cv_record.data_size             = %d\n", int32(m.CvRecord.DataSize))
		d.printf("  cv_record.rva                   = 0x%x\n", m.CvRecord.Rva)
		d.printf("  misc_record.data_size           = %d\n", int32(m.MiscRecord.DataSize))
		d.printf("  misc_record.rva                 = 0x%x\n", m.MiscRecord.Rva)
		d.printf("  (code_file)                     = \"%s\"\n", cstr(m.CodeFile()))
		d.printf("  (code_identifier)               = \"%s\"\n", m.CodeIdentifier())
		d.cvRecord(m)
		if misc, ok := m.DebugMisc(); ok && m.MiscErr == nil {
			d.printf("  (misc_record).data_type         = 0x%x\n", misc.DataType)
			d.printf("  (misc_record).length            = 0x%x\n", misc.Length)
			d.printf("  (misc_record).unicode           = %d\n", m.MiscUnicode())
			var data string
			if misc.Unicode {
				data = minidump.UTF16Buffer(misc.Data)
			} else {
				data = cstr(string(misc.Data))
			}
			d.printf("  (misc_record).data              = \"%s\"\n", textsafe.Escape(data))
		} else {
			d.printf("  (misc_record)                   = (null)\n")
		}
		d.printf("  (debug_file)                    = \"%s\"\n", cstr(m.DebugFile()))
		d.printf("  (debug_identifier)              = \"%s\"\n", m.DebugIdentifier())
		d.printf("  (version)                       = \"%s\"\n", m.Version())
		d.printf("\n")
	}
}

// cvRecord prints the module's CodeView record by its signature.
func (d *dumper) cvRecord(m *minidump.Module) {
	if m.CodeView == nil || m.CodeViewErr != nil {
		d.printf("  (cv_record)                     = (null)\n")
		return
	}
	if r, ok := m.PDB70(); ok {
		d.printf("  (cv_record).cv_signature        = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).signature           = %s\n", r.Signature)
		d.printf("  (cv_record).age                 = %d\n", int32(r.Age))
		d.printf("  (cv_record).pdb_file_name       = \"%s\"\n", textsafe.Escape(r.PDBFileName))
		return
	}
	if r, ok := m.PDB20(); ok {
		d.printf("  (cv_record).cv_header.signature = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).cv_header.offset    = 0x%x\n", r.Offset)
		d.printf("  (cv_record).signature           = 0x%x %s\n", r.Signature, utc(r.Signature))
		d.printf("  (cv_record).age                 = %d\n", int32(r.Age))
		d.printf("  (cv_record).pdb_file_name       = \"%s\"\n", textsafe.Escape(r.PDBFileName))
		return
	}
	if id, ok := m.BuildID(); ok {
		d.printf("  (cv_record).cv_signature        = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).build_id            = %x\n", id)
		return
	}
	d.printf("  (cv_record)                     = %x\n", m.CodeView)
}
