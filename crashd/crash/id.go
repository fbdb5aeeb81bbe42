// Package crash is the shared vocabulary of the crash server (crashd): crash
// ids in Antenna's form, the raw crash (annotations plus Antenna's metadata),
// the processed crash, the storage keys in Antenna's and Socorro's layout and
// the check of dump names. It imports only the standard library, so every
// role of the server (collector, processor, API) and the tools around it can
// share it.
package crash

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// ID is a crash id in Antenna's form: a random (version 4) UUID, hyphenated,
// lower-case, whose last seven characters are replaced by the throttle result
// digit and the UTC date of submission as YYMMDD:
//
//	de1bb258-cbbf-4589-a673-34f800160918
//	                             ^^^^^^^
//	                             |  yymmdd
//	                             throttle result
//
// Clients are told "CrashID=bp-<id>"; the "bp-" prefix is not part of the id.
type ID string

// Throttle result digits of crash ids, as Antenna writes them.
const (
	// ThrottleAccept marks a crash accepted for processing (Antenna's ACCEPT, 0).
	ThrottleAccept = 0
	// ThrottleDefer marks a crash stored but not processed (Antenna's DEFER, 1).
	ThrottleDefer = 1
	// ThrottleFakeAccept is the digit of the ids Antenna answers to crashes it
	// pretends to accept and throws away (FAKEACCEPT, 3); such ids are never stored.
	ThrottleFakeAccept = 3
)

// IDPrefix is what precedes a crash id in the collector's answer and in the
// crash ids people copy from it ("bp-" for Breakpad).
const IDPrefix = "bp-"

// New returns a new crash id for a crash received at now (its UTC date is
// written into the id) with the given throttle result digit (ThrottleAccept,
// ThrottleDefer, ...; a value outside 0-9 is written as its last decimal
// digit). It reads crypto/rand, which does not fail on supported platforms.
func New(now time.Time, throttle int) ID {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	if throttle < 0 {
		throttle = -throttle
	}
	d := now.UTC()
	tail := fmt.Sprintf("%d%02d%02d%02d", throttle%10, d.Year()%100, int(d.Month()), d.Day())
	copy(b[29:], tail)
	return ID(b[:])
}

// Valid reports whether s has the shape of a crash id as Antenna's
// validate_crash_id checks it (strict): 8-4-4-4-12 lower-case hexadecimal
// digits, of which the last seven are decimal, the first of them (the
// throttle result) 0 or 1. Fake-accepted ids (throttle digit 3) are not
// valid: they name nothing stored.
func Valid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case i >= 30:
			if c < '0' || c > '9' {
				return false
			}
		case i == 29:
			if c != '0' && c != '1' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// Parse returns the crash id in s, which may carry the "bp-" prefix and
// surrounding white space (as copied from a collector's answer), or an error
// saying why it is not one.
func Parse(s string) (ID, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), IDPrefix)
	if !Valid(t) {
		return "", fmt.Errorf("crash id %q: not a crash id (8-4-4-4-12 lower-case hex digits ending in the throttle digit 0 or 1 and the UTC date YYMMDD)", s)
	}
	return ID(t), nil
}

// String returns the id without the "bp-" prefix.
func (id ID) String() string { return string(id) }

// Throttle returns the throttle result digit of the id (-1 if id is too short).
func (id ID) Throttle() int {
	if len(id) < 7 {
		return -1
	}
	c := id[len(id)-7]
	if c < '0' || c > '9' {
		return -1
	}
	return int(c - '0')
}

// DateString returns the date of the id as YYYYMMDD ("20" and the id's
// YYMMDD), as Antenna's get_date_from_crash_id does: the date part of the
// raw crash's storage key. It returns "" if id is too short.
func (id ID) DateString() string {
	if len(id) < 6 {
		return ""
	}
	return "20" + string(id[len(id)-6:])
}

// Date returns the UTC date written into the id (midnight of that day), or
// an error if it is not a calendar date.
func (id ID) Date() (time.Time, error) {
	ds := id.DateString()
	t, err := time.Parse("20060102", ds)
	if err != nil {
		return time.Time{}, fmt.Errorf("crash id %s: date %q: %w", id, ds, err)
	}
	return t, nil
}
