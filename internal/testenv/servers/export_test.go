package servers

// RedisPid is the process id of the server's current run (0 while stopped).
func RedisPid(s *Redis) int { return s.Pid() }
