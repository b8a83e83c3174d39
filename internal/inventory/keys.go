package inventory

import "github.com/seckill/seckill/internal/keys"

// Keys names the Redis keys of products under one namespace prefix (the layout is
// internal/keys, which tools that audit Redis directly read without linking the service).
type Keys = keys.Keys
