package blob

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-kit/log"
)

// kitLogger adapts slog to the go-kit logger thanos objstore takes. go-kit
// logs alternating keys and values; "level" (from go-kit's level package)
// picks the slog level and "msg" the message, the rest become attributes.
// The configuration's secrets are replaced in all of them: the S3 client's
// request trace (config trace.enable) prints headers such as
// X-Amz-Security-Token.
type kitLogger struct {
	l       *slog.Logger
	secrets []string
}

var _ log.Logger = kitLogger{}

func (k kitLogger) Log(keyvals ...any) error {
	lvl, msg := slog.LevelInfo, ""
	attrs := make([]any, 0, len(keyvals))
	for i := 0; i < len(keyvals); i += 2 {
		key := fmt.Sprint(keyvals[i])
		var val any = "(MISSING)"
		if i+1 < len(keyvals) {
			val = keyvals[i+1]
		}
		switch {
		case key == "level":
			lvl = kitLevel(fmt.Sprint(val))
		case key == "msg" && msg == "":
			msg = redact(fmt.Sprint(val), k.secrets)
		case len(k.secrets) > 0:
			attrs = append(attrs, key, redact(fmt.Sprint(val), k.secrets))
		default:
			attrs = append(attrs, key, val)
		}
	}
	k.l.Log(context.Background(), lvl, msg, attrs...)
	return nil
}

func kitLevel(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
