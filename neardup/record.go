package neardup

import (
	"encoding/binary"
	"fmt"
)

// A log is a sequence of records, each a header of recordHeader bytes and
// an ID:
//
//	kind (1 byte) | hash (8) | expiry (8, unix ms) | ID length (2) | ID
//
// all big-endian. An add record makes the ID's entry the hash, live until
// the expiry, and replaces the ID's entry before it; a drop record removes
// the ID's entry (its hash and expiry are 0). So the index is what the
// records say when replayed in order: the previous generation's log, then
// the current one's.
const (
	recordHeader = 1 + 8 + 8 + 2
	kindAdd      = 'a'
	kindDrop     = 'd'
	// maxIDBytes bounds an entry's ID, so that its length fits the header.
	maxIDBytes = 1<<16 - 1
)

// record is one record of a log.
type record struct {
	kind    byte
	hash    uint64
	expires int64 // unix ms
	id      string
}

// appendRecord appends r to b in the log's format.
func appendRecord(b []byte, r record) []byte {
	b = append(b, r.kind)
	b = binary.BigEndian.AppendUint64(b, r.hash)
	b = binary.BigEndian.AppendUint64(b, uint64(r.expires))
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.id)))
	return append(b, r.id...)
}

// parseRecord reads the record at the start of b. It returns the record,
// the offset of its ID in b and its length in bytes; n is 0 when b holds
// only part of a record (its rest is still to be read), and err is set
// when b does not start with a record at all.
func parseRecord(b []byte) (r record, idAt, n int, err error) {
	if len(b) < recordHeader {
		return record{}, 0, 0, nil
	}
	r.kind = b[0]
	if r.kind != kindAdd && r.kind != kindDrop {
		return record{}, 0, 0, fmt.Errorf("unknown record kind %q", r.kind)
	}
	r.hash = binary.BigEndian.Uint64(b[1:9])
	r.expires = int64(binary.BigEndian.Uint64(b[9:17]))
	idLen := int(binary.BigEndian.Uint16(b[17:19]))
	if idLen == 0 {
		return record{}, 0, 0, fmt.Errorf("record without an id")
	}
	if len(b) < recordHeader+idLen {
		return record{}, 0, 0, nil
	}
	return r, recordHeader, recordHeader + idLen, nil
}
