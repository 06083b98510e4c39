package neardup

import (
	"encoding/binary"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// keys names the index's Redis keys under the caller's namespace.
type keys struct{ ns string }

// genStem is the start of every generation key; lua/find_or_add.lua
// appends the generation's number, as gen does. (The index kept its
// entries in ns:zband:* and ns:id:* keys before; those expire by
// themselves a window after a job's last add.)
func (k keys) genStem() string { return k.ns + ":gen:" }

// gen is the HASH of the entries added in generation g, the window
// [g*window, (g+1)*window) in unix ms.
func (k keys) gen(g int64) string { return k.genStem() + strconv.FormatInt(g, 10) }

// The fields of a generation's HASH (see lua/find_or_add.lua).
const (
	// bandPrefix is the first byte of band 0's fields; band i's is
	// bandPrefix+i.
	bandPrefix = '0'
	// entryPrefix starts the field of an entry, named by its key: its
	// hash, expiry (unix ms), ' ', its id.
	entryPrefix = 'e'
)

// hashBytes is h as the 8 big-endian bytes the scripts store.
func hashBytes(h uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h)
	return string(b[:])
}

// bandField is the field of the hashes whose band i (0 = the top 16 bits)
// is that of h.
func bandField(i int, h uint64) string {
	v := uint16(h >> (48 - 16*i))
	return string([]byte{bandPrefix + byte(i), byte(v >> 8), byte(v)})
}

// entryKey is the key of id's entries: a 64-bit digest (xxhash64). Two
// ids of one key share an entry field, so the later one's add drops the
// other's entry from the current generation; the odds that any two of n
// ids share a key are n²/2^65, 1 in 4·10^5 for 10^7 ids.
func entryKey(id string) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], xxhash.Sum64String(id))
	return string(b[:])
}

// entryField is the field of id's entry.
func entryField(id string) string { return string(entryPrefix) + entryKey(id) }

// bandRecord is what the band fields hold of the entry of id with hash h.
func bandRecord(id string, h uint64) string { return hashBytes(h) + entryKey(id) }
