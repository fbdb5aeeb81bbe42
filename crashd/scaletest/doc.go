// Package scaletest starts the engines a scaled-out crashd runs on, for
// tests and tools/scale: a cluster of Debian's nats-server processes and a
// PostgreSQL instance in a temporary directory (Debian's postgresql, run as
// the postgres user when the caller is root), all on 127.0.0.1, each
// stopped by its pid. Nothing here is a mock: these are the real servers,
// and callers skip when they are not installed ([NATSServer],
// [PostgresBin]).
package scaletest
