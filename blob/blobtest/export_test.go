package blobtest

// PID is the MinIO process id, for tests that check it dies.
func (s *MinIOServer) PID() int { return s.proc.cmd.Process.Pid }

var (
	BucketName  = bucketName
	MinIOBinary = minioBinary
	ErrNoMinIO  = errNoMinIO
)

var Missing = missing
