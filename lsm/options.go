package lsm

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/wal"
)

// Options configure a DB. The zero value is valid after EnsureDefaults.
type Options struct {
	// WALFlushInterval is the minimum spacing between WAL flushes. 0 flushes
	// as soon as the previous flush ends (local disk); on S3 an interval
	// bounds the PUT rate, and a write that has waited an interval starts a
	// flush beside the one in flight, so it waits about an interval plus a
	// PUT, not two PUTs (see wal.Options.FlushInterval).
	WALFlushInterval time.Duration
	// WALMaxObjectBytes cuts a WAL flush early. Default 8 MiB.
	WALMaxObjectBytes int
	// WALInflight is how many WAL PUTs may be in flight at once (1..16).
	// Default 4.
	WALInflight int

	// MemtableSize is the size at which the memtable is frozen and flushed
	// to an L0 SST. Default 64 MiB.
	MemtableSize int64
	// MaxUnflushedBytes bounds memtable plus frozen memtables; writes wait
	// beyond it. Default 4 × MemtableSize.
	MaxUnflushedBytes int64
	// L0SlowdownSSTs: at this many L0 SSTs each write is delayed a little.
	// Default 16.
	L0SlowdownSSTs int
	// L0StopSSTs: at this many L0 SSTs memtable flushes, and so writes once
	// MaxUnflushedBytes is reached, wait for compaction. Default 48.
	L0StopSSTs int

	// BlockSize is the target uncompressed size of SST data blocks. Default 4 KiB.
	BlockSize int
	// Compression of SST and WAL blocks. Default S2.
	Compression sst.Compression
	// BloomBitsPerKey sizes SST bloom filters. Default 10.
	BloomBitsPerKey int
	// BlockCacheBytes bounds the block cache. Default 256 MiB.
	BlockCacheBytes int64

	// ManifestPollInterval is how often the engine looks for manifests
	// written by a compactor. Default 1 s.
	ManifestPollInterval time.Duration
	// UnsafeSkipConditionalWriteCheck opens a bucket whose provider cannot
	// create-if-absent. Only safe with a single writer, ever.
	UnsafeSkipConditionalWriteCheck bool

	// Pacer, if set, makes the engine's background work (memtable flushes,
	// WAL objects) step aside while the server it runs in is busy with
	// clients (see sst.Pacer). Nil: it yields the cheap way.
	Pacer *sst.Pacer

	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// WallClock returns wall time in ms since the epoch; tests inject it.
	// Default time.Now.
	WallClock func() int64
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.WALMaxObjectBytes == 0 {
		o.WALMaxObjectBytes = 8 << 20
	}
	if o.WALInflight == 0 {
		o.WALInflight = 4
	}
	if o.MemtableSize == 0 {
		o.MemtableSize = 64 << 20
	}
	if o.MaxUnflushedBytes == 0 {
		o.MaxUnflushedBytes = 4 * o.MemtableSize
	}
	if o.L0SlowdownSSTs == 0 {
		o.L0SlowdownSSTs = 16
	}
	if o.L0StopSSTs == 0 {
		o.L0StopSSTs = 48
	}
	if o.BlockSize == 0 {
		o.BlockSize = 4 << 10
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = 10
	}
	if o.BlockCacheBytes == 0 {
		o.BlockCacheBytes = 256 << 20
	}
	if o.ManifestPollInterval == 0 {
		o.ManifestPollInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WallClock == nil {
		o.WallClock = func() int64 { return time.Now().UnixMilli() }
	}
}

// ErrInvalidOptions is wrapped by Validate's errors.
var ErrInvalidOptions = errors.New("lsm: invalid options")

// Validate reports the first unusable setting.
func (o *Options) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
	switch {
	case o.WALFlushInterval < 0:
		return bad("WALFlushInterval %v is negative", o.WALFlushInterval)
	case o.WALInflight < 1 || o.WALInflight > wal.MaxInflight:
		return bad("WALInflight %d outside [1, %d]", o.WALInflight, wal.MaxInflight)
	case o.WALMaxObjectBytes < 1<<10:
		return bad("WALMaxObjectBytes %d is below 1 KiB", o.WALMaxObjectBytes)
	case o.MemtableSize < 64<<10:
		return bad("MemtableSize %d is below 64 KiB", o.MemtableSize)
	case o.MaxUnflushedBytes < 2*o.MemtableSize:
		return bad("MaxUnflushedBytes %d is below 2 × MemtableSize", o.MaxUnflushedBytes)
	case o.L0SlowdownSSTs < 1 || o.L0StopSSTs < o.L0SlowdownSSTs:
		return bad("need 1 <= L0SlowdownSSTs (%d) <= L0StopSSTs (%d)", o.L0SlowdownSSTs, o.L0StopSSTs)
	case o.BlockSize < 256 || o.BlockSize > 4<<20:
		return bad("BlockSize %d outside [256, 4 MiB]", o.BlockSize)
	case o.Compression > sst.CompressionZstd:
		return bad("unknown compression %d", o.Compression)
	case o.BloomBitsPerKey < 0 || o.BloomBitsPerKey > 32:
		return bad("BloomBitsPerKey %d outside [0, 32]", o.BloomBitsPerKey)
	case o.BlockCacheBytes < 0:
		return bad("BlockCacheBytes %d is negative", o.BlockCacheBytes)
	case o.ManifestPollInterval < 10*time.Millisecond:
		return bad("ManifestPollInterval %v is below 10ms", o.ManifestPollInterval)
	}
	return nil
}
