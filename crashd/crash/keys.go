package crash

import "strings"

// Storage keys, in the layout Antenna writes to its bucket and Socorro reads
// (the blob store's keys are slash-separated paths):
//
//	v1/raw_crash/<YYYYMMDD>/<id>   the raw crash JSON (RawCrash)
//	v1/dump_names/<id>             JSON list of the crash's dump names, sorted
//	v1/<dump file name>/<id>       each dump ("dump" for upload_file_minidump)
//	v1/processed_crash/<id>        the processed crash JSON (ProcessedCrash)
//	v1/queued/<YYYYMMDD>/<id>      crashd's marker: the id was published to the queue
//	v1/processed_synced            crashd's: processed crashes recorded before this time are on disk
//
// The first four are Antenna's and Socorro's; the last two are crashd's own.
const (
	// KeyRoot is the first segment of every key.
	KeyRoot = "v1"
	// RawCrashPrefix is the prefix of every raw crash key; the date of the
	// crash (YYYYMMDD) and its id follow.
	RawCrashPrefix = "v1/raw_crash/"
	// QueuedPrefix is the prefix of the markers of published crashes.
	QueuedPrefix = "v1/queued/"
	// ProcessedCrashPrefix is the prefix of the processed crashes.
	ProcessedCrashPrefix = "v1/processed_crash/"
	// DumpNamesPrefix is the prefix of the dump name lists.
	DumpNamesPrefix = "v1/dump_names/"
	// ProcessedSyncedKey holds a time (RFC 3339, UTC): every processed
	// crash the index recorded before it is durable in the store. The
	// processor stores processed crashes without waiting for the disk and
	// makes them durable in batches, moving this time forward; at start-up
	// it checks those recorded after it, and queues again any whose
	// processed crash is missing or not JSON (a crash of the machine).
	ProcessedSyncedKey = "v1/processed_synced"
)

// RawCrashKey returns the key of the raw crash of id: v1/raw_crash/<YYYYMMDD>/<id>.
func RawCrashKey(id ID) string { return RawCrashPrefix + id.DateString() + "/" + string(id) }

// DumpNamesKey returns the key of the JSON list of id's dump names: v1/dump_names/<id>.
func DumpNamesKey(id ID) string { return DumpNamesPrefix + string(id) }

// DumpKey returns the key of the dump called name of crash id:
// v1/<DumpFileName(name)>/<id> (the minidump, upload_file_minidump, is
// v1/dump/<id>). name should be a name DumpName accepted.
func DumpKey(id ID, name string) string { return KeyRoot + "/" + DumpFileName(name) + "/" + string(id) }

// ProcessedCrashKey returns the key of the processed crash of id: v1/processed_crash/<id>.
func ProcessedCrashKey(id ID) string { return ProcessedCrashPrefix + string(id) }

// QueuedKey returns the key of the marker written after id was published to
// the processing queue: v1/queued/<YYYYMMDD>/<id>, in a folder per day as
// the raw crashes, so that the sweep finds a day's unqueued crashes by
// listing the two folders side by side, without a request per crash. A raw
// crash without this marker was stored but perhaps never queued (the
// collector died or the queue refused it), and the sweep publishes it
// again (processing is idempotent).
func QueuedKey(id ID) string { return QueuedPrefix + id.DateString() + "/" + string(id) }

// LegacyQueuedKey returns the key the marker had before it was foldered
// by day, v1/queued/<id> (crashd 2026-11 and before): the sweep still
// honours it and retention deletes it.
func LegacyQueuedKey(id ID) string { return QueuedPrefix + string(id) }

// IDFromKey returns the crash id that ends a storage key (any of the keys
// above), if the key ends in a valid one.
func IDFromKey(key string) (ID, bool) {
	i := strings.LastIndexByte(key, '/')
	s := key[i+1:]
	if !Valid(s) {
		return "", false
	}
	return ID(s), true
}
