package crash

// MinidumpField is the form field of the minidump in Breakpad's, Crashpad's,
// Electron's and Sentry's uploads (Antenna's dump_field).
const MinidumpField = "upload_file_minidump"

// MinidumpFile is the storage name of MinidumpField's dump (v1/dump/<id>).
const MinidumpFile = "dump"

// maxDumpName is Antenna's limit on the length of a sanitized dump name.
const maxDumpName = 30

// reservedDumpNames are the names a dump may not have, because its key
// would be one of the store's own folders: Antenna's three (dump_names,
// processed_crash, raw_crash) and crashd's marker folder (queued).
var reservedDumpNames = map[string]bool{
	"dump_names":      true,
	"processed_crash": true,
	"raw_crash":       true,
	"queued":          true,
}

// DumpName is the one check of dump names: it returns the name a dump sent
// in the form field field is stored under, sanitized as Antenna's
// sanitize_key_name does (only ASCII letters, digits and underscores kept,
// cut to 30 bytes), and false if that name is reserved for the store's own
// folders (Antenna's "invalid_dump_name": raw_crash, dump_names,
// processed_crash; and crashd's queued). The empty name (a field of only
// other characters) is stored as the minidump, as Antenna's bucket storage
// does.
func DumpName(field string) (string, bool) {
	b := make([]byte, 0, min(len(field), maxDumpName))
	for i := 0; i < len(field) && len(b) < maxDumpName; i++ {
		c := field[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b = append(b, c)
		}
	}
	name := string(b)
	return name, !reservedDumpNames[name]
}

// DumpFileName returns the name of the storage folder of the dump called
// name: "dump" for the minidump (upload_file_minidump, or the empty name),
// the name itself otherwise.
func DumpFileName(name string) string {
	if name == "" || name == MinidumpField {
		return MinidumpFile
	}
	return name
}
