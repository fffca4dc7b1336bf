package blobtest

import (
	"fmt"
)

// StartMinIO starts a MinIO server of its own, with its state under dir and
// a bucket named bucket, for programs that are not tests (the hardening
// campaigns of integration/chaos). The caller owns it: Halt and Resume stop
// and restart the process keeping its data, Close stops it for good. The
// binary is found as for MinIO; an error wrapping the lookup failure is
// returned when there is none.
func StartMinIO(dir, bucket string) (*MinIOServer, error) {
	bin, err := minioBinary()
	if err != nil {
		return nil, err
	}
	proc, err := startProcess(bin, dir)
	if err != nil {
		return nil, err
	}
	if err := proc.makeBucket(bucket); err != nil {
		proc.stop()
		return nil, err
	}
	return &MinIOServer{
		Endpoint:  proc.addr,
		AccessKey: accessKey,
		SecretKey: secretKey,
		Bucket:    bucket,
		proc:      proc,
		dedicated: true,
	}, nil
}

// Halt stops a server from StartMinIO or NewMinIO (SIGTERM, then SIGKILL),
// keeping its data; requests fail until Resume.
func (s *MinIOServer) Halt() error {
	if !s.dedicated {
		return fmt.Errorf("blobtest: Halt on the shared MinIO")
	}
	s.proc.stop()
	return nil
}

// Resume restarts a halted server on the same address with the same data.
func (s *MinIOServer) Resume() error {
	if !s.dedicated {
		return fmt.Errorf("blobtest: Resume on the shared MinIO")
	}
	if s.proc.cmd != nil {
		return fmt.Errorf("blobtest: Resume on a running MinIO")
	}
	return s.proc.start()
}

// Close stops a server from StartMinIO for good. Its data directory is the
// caller's to remove.
func (s *MinIOServer) Close() { s.proc.stop() }
