package inventory

import "github.com/seckill/seckill/internal/keys"

// Keys names the Redis keys of products under one prefix (internal/keys).
type Keys = keys.Keys
