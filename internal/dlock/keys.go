package dlock

import (
	"errors"
	"fmt"
	"strings"
)

// Suffixes of the keys derived from a lock key. All live in the lock key's
// hash slot (see derive), so one script may touch them together in a cluster.
const (
	fenceSuffix   = ":fence" // string: the last fencing token minted for the key
	channelSuffix = ":rel"   // pub/sub channel: a release of the key was published
	// releasedSuffix, followed by a token, names the marker that the release of a fair
	// lock or of a reader leaves (fairrelease.lua, rwreader.lua).
	releasedSuffix = ":released:"
)

// hasHashTag reports whether key carries a non-empty Redis Cluster hash tag:
// the part between the first '{' and the first '}' after it. Only that part is
// hashed to pick the slot, exactly as Redis Cluster specifies.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	return strings.IndexByte(key[open+1:], '}') > 0
}

// derive returns the companion key of key with the given suffix, in key's
// hash slot. A key with a hash tag keeps it: "seckill:{p:42}:lock" becomes
// "seckill:{p:42}:lock:fence". A key without one is wrapped in a tag that
// hashes exactly like the bare key: "orders" becomes "{orders}:fence".
func derive(key, suffix string) string {
	open, end := tagWrap(key)
	return open + key + end + suffix
}

// tagWrap returns what derive puts around key: nothing for a key with a hash tag, else braces
// that make the whole key the tag.
func tagWrap(key string) (open, end string) {
	if hasHashTag(key) {
		return "", ""
	}
	return "{", "}"
}

// companions returns key's fence key and release channel (see derive), cut from one string:
// one allocation instead of two on every Obtain.
func companions(key string) (fenceKey, channel string) {
	open, end := tagWrap(key)
	var b strings.Builder
	b.Grow(2*(len(open)+len(key)+len(end)) + len(fenceSuffix) + len(channelSuffix))
	for _, suffix := range []string{fenceSuffix, channelSuffix} {
		b.WriteString(open)
		b.WriteString(key)
		b.WriteString(end)
		b.WriteString(suffix)
	}
	both := b.String()
	cut := len(open) + len(key) + len(end) + len(fenceSuffix)
	return both[:cut], both[cut:]
}

// releasedKey returns the marker that the release of token leaves (fairrelease.lua,
// rwreader.lua), in key's hash slot.
func releasedKey(key, token string) string { return derive(key, releasedSuffix+token) }

// FenceKey returns the key where the fencing tokens of lock key are minted (a string: the
// last one), in key's hash slot. For tests and tools that look at a lock from outside.
func FenceKey(key string) string { return derive(key, fenceSuffix) }

// checkKey rejects keys for which derive cannot guarantee a shared slot: a key
// with a '}' but no valid tag (such as "a}b" or "{}x") would be cut short by
// the wrapping tag.
func checkKey(key string) error {
	if key == "" {
		return errors.New("dlock: empty key")
	}
	if !hasHashTag(key) && strings.IndexByte(key, '}') >= 0 {
		return fmt.Errorf("dlock: key %q has a '}' but no hash tag, so its derived keys cannot share its hash slot", key)
	}
	return nil
}
