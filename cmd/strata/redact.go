package main

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/stratakv/strata/blob"
)

// minSecretLen is the shortest secret the output is scrubbed of. Shorter
// values (test keys like "x", MinIO's "minio") would turn ordinary words
// of every log line into [REDACTED], and guard nothing: AWS and MinIO
// secret keys are at least 8 characters long.
const minSecretLen = 8

// redacted replaces a secret in output.
var redacted = []byte("[REDACTED]")

// secrets returns what no output of a subcommand may show: the bucket's
// credentials, from its objstore configuration file and the AWS
// environment, and any extra (requirepass). Each also in its quoted form,
// as slog's text and JSON handlers escape quotes and backslashes.
func (b *bucketFlags) secrets(extra ...string) [][]byte {
	vals := append([]string{os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"),
		os.Getenv("AWS_SESSION_TOKEN")}, extra...)
	if b.configFile != "" {
		if conf, err := os.ReadFile(b.configFile); err == nil {
			vals = append(vals, blob.ConfigSecrets(conf)...)
		}
	}
	var out [][]byte
	for _, v := range vals {
		if len(v) < minSecretLen {
			continue
		}
		out = append(out, []byte(v))
		if q := strconv.Quote(v); q[1:len(q)-1] != v {
			out = append(out, []byte(q[1:len(q)-1]))
		}
	}
	return out
}

// redactWriter scrubs secrets from everything written through it. Log
// handlers and fmt.Fprint write a record or a line per Write, so a secret
// is never split across two calls.
type redactWriter struct {
	w       io.Writer
	secrets [][]byte
}

// newRedactWriter returns w itself when there is nothing to scrub.
func newRedactWriter(w io.Writer, secrets [][]byte) io.Writer {
	if len(secrets) == 0 {
		return w
	}
	return &redactWriter{w: w, secrets: secrets}
}

func (r *redactWriter) Write(p []byte) (int, error) {
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, redacted)
		}
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
