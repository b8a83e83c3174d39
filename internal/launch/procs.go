package launch

import "github.com/seckill/seckill/internal/procs"

// The processes of internal/procs, under the names the tests use; the API is this package's
// build of cmd/api (BuildAPI).
type (
	API               = procs.API
	AOFMark           = procs.AOFMark
	Buffer            = procs.Buffer
	Netns             = procs.Netns
	Process           = procs.Process
	Redis             = procs.Redis
	RedisClock        = procs.RedisClock
	RedisFault        = procs.RedisFault
	SentinelOptions   = procs.SentinelOptions
	Sentinels         = procs.Sentinels
	ZooKeeper         = procs.ZooKeeper
	ZooKeeperEnsemble = procs.ZooKeeperEnsemble
)

// Launchers and bounds of internal/procs.
var (
	ErrUnavailable           = procs.ErrUnavailable
	Addrs                    = procs.Addrs
	FreeAddr                 = procs.FreeAddr
	LookBin                  = procs.LookBin
	NetnsSupported           = procs.NetnsSupported
	RedisBin                 = procs.RedisBin
	StableProxy              = procs.StableProxy
	StartNetns               = procs.StartNetns
	StartProcess             = procs.StartProcess
	StartRedis               = procs.StartRedis
	StartRedisReplica        = procs.StartRedisReplica
	StartSentinels           = procs.StartSentinels
	FaketimeLib              = procs.FaketimeLib
	StartRedisCluster        = procs.StartRedisCluster
	StartRedisFakeClock      = procs.StartRedisFakeClock
	StartZooKeeperEnsemble   = procs.StartZooKeeperEnsemble
	StartZooKeeperEnsembleIn = procs.StartZooKeeperEnsembleIn
	ZooKeeperJava            = procs.ZooKeeperJava
	ZooKeeperLeader          = procs.ZooKeeperLeader
)

// Bounds of a Sentinel deployment (internal/procs).
const (
	SentinelDownAfter       = procs.SentinelDownAfter
	SentinelFailoverTimeout = procs.SentinelFailoverTimeout
)

// StartAPI is procs.StartAPI of this process's build of cmd/api (BuildAPI).
func StartAPI(name string, env map[string]string) (*API, error) {
	bin, err := BuildAPI()
	if err != nil {
		return nil, err
	}
	return procs.StartAPI(bin, name, env)
}

// StartAPIs is procs.StartAPIs of this process's build of cmd/api (BuildAPI).
func StartAPIs(n int, env map[string]string) ([]*API, error) {
	bin, err := BuildAPI()
	if err != nil {
		return nil, err
	}
	return procs.StartAPIs(bin, n, env)
}

// LaunchAPI is procs.LaunchAPI of this process's build of cmd/api (BuildAPI).
func LaunchAPI(name string, env map[string]string) (*API, error) {
	bin, err := BuildAPI()
	if err != nil {
		return nil, err
	}
	return procs.LaunchAPI(bin, name, env)
}

// LaunchAPIIn is procs.LaunchAPIIn of this process's build of cmd/api (BuildAPI).
func LaunchAPIIn(ns *Netns, name string, env map[string]string) (*API, error) {
	bin, err := BuildAPI()
	if err != nil {
		return nil, err
	}
	return procs.LaunchAPIIn(ns, bin, name, env)
}

// StartAPIIn is procs.StartAPIIn of this process's build of cmd/api (BuildAPI).
func StartAPIIn(ns *Netns, name string, env map[string]string) (*API, error) {
	bin, err := BuildAPI()
	if err != nil {
		return nil, err
	}
	return procs.StartAPIIn(ns, bin, name, env)
}

// unavailable is procs.Unavailable: an error that wraps ErrUnavailable and says why.
func unavailable(why string) error { return procs.Unavailable(why) }
