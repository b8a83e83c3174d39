package lab

import (
	"fmt"
	"slices"
)

// Names lists the locks a lab product may name, from no lock at all to the project's own,
// then the peer Redis libraries, etcd's lock (internal/etcdlock), and the database (a
// PostgreSQL advisory lock) and ZooKeeper (internal/zklock) as locks, each without and with a
// fence; Acquire takes each (docs/lab.md says what each one gets wrong, if anything).
var Names = []string{"none", "mutex", "setnx", "setnx-expire", "del", "lease", "watchdog", "fence", "dlock", "redsync", "redislock", "etcd",
	"postgres-nofence", "postgres", "zookeeper-nofence", "zookeeper"}

// Bounds of a lab product's own lease (its lease_ms), when it has one.
const (
	MinLeaseMS = 10
	MaxLeaseMS = 60_000
)

// Check reports what is wrong with a lab product's lock and lease, in words for the person
// who sent them: lock must be one of Names, leaseMS 0 (the API's lock TTL) or MinLeaseMS to
// MaxLeaseMS. internal/app hands it to the product store (inventory.Store.CheckLab).
func Check(lock string, leaseMS int) error {
	switch {
	case !slices.Contains(Names, lock):
		return fmt.Errorf("strategy lab needs a lock, one of %v", Names)
	case leaseMS != 0 && (leaseMS < MinLeaseMS || leaseMS > MaxLeaseMS):
		return fmt.Errorf("lease_ms must be 0 (the lock TTL) or between %d and %d", MinLeaseMS, MaxLeaseMS)
	}
	return nil
}
