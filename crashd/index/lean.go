package index

// migrationLean (schema version 7) drops two indexes of crashes that no
// query of this package reads any more, each of which cost every
// processed crash a b-tree insert and, in SQLite, a page written to the
// WAL and again at the checkpoint (docs/crashd.md, "Benchmark"):
//
//   - crashes_status (status, received_at) is a prefix of crashes_triage
//     (status, received_at, signature, ...), which answers every query
//     that used it (Search by status newest first, Counts, ProcessedSince)
//     in the same order;
//   - crashes_top (product, crash_day, signature) was made for a
//     top-crashers query by crash_day; TopCrashers and the facets count
//     whole days from the crash_daily rollups (migration 5) and the rest
//     by received_at through crashes_triage, and nothing else filters
//     crashes by crash_day but retention's delete, which it could not
//     serve (product first).
//
// TestQueryPlans checks on SQLite that the queries that used them still
// read an index. Portable SQL: PostgreSQL drops a partitioned index with
// its partitions' indexes.
const migrationLean = `
DROP INDEX crashes_status;
DROP INDEX crashes_top;
`
