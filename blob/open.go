package blob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/client"
	"gopkg.in/yaml.v2"
)

// Open opens the bucket named by spec:
//
//	./data, /var/lib/strata      a local directory (LocalBucket)
//	file:///var/lib/strata       the same, as a URL (absolute paths only)
//	mem://                       a new, empty in-memory bucket
//	s3://bucket[/prefix][?endpoint=host:port&insecure=true&region=r]
//
// For s3 the endpoint defaults to AWS's; credentials come from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) when
// both are set, else from the AWS SDK's default chain (shared config and
// credentials files, web identity, ECS and EC2 roles). URLs never carry
// credentials. The bucket is returned without retries: wrap it with
// NewRetryBucket (the S3 client's own retries are turned off, because they
// would hide a failed first attempt from the create-if-absent rule).
func Open(ctx context.Context, spec string, logger *slog.Logger) (objstore.Bucket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logger = orDiscard(logger)
	s, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	switch s.kind {
	case specMem:
		logger.Info("blob: opened in-memory bucket")
		return NewMemBucket(), nil
	case specFile:
		return openLocal(s.dir, "", logger)
	}
	conf := map[any]any{
		"bucket":   s.bucket,
		"endpoint": s.endpoint,
		"insecure": s.insecure,
	}
	if s.region != "" {
		conf["region"] = s.region
	}
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if key != "" && secret != "" {
		conf["access_key"], conf["secret_key"] = key, secret
		if tok := os.Getenv("AWS_SESSION_TOKEN"); tok != "" {
			conf["session_token"] = tok
		}
	}
	return openThanos(&client.BucketConfig{Type: objstore.S3, Config: conf, Prefix: s.prefix}, logger)
}

// OpenConfig opens a bucket from thanos objstore's client configuration:
//
//	type: S3          # or FILESYSTEM, GCS, AZURE, ... (MEMORY for tests)
//	config:
//	  bucket: strata
//	  endpoint: minio:9000
//	  access_key: ... # optional, see below
//	  secret_key: ...
//	prefix: tenant-a  # optional
//
// FILESYSTEM (config: {directory: ...}) opens a LocalBucket, because thanos'
// filesystem provider does not fsync. For S3 without access_key the AWS SDK's
// default credential chain is used (aws_sdk_auth: true), and max_retries
// defaults to 1 (no client-side retries; see Open). Secrets in the
// configuration never appear in errors or logs.
func OpenConfig(ctx context.Context, yamlConf []byte, logger *slog.Logger) (objstore.Bucket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logger = orDiscard(logger)
	var conf client.BucketConfig
	if err := yaml.UnmarshalStrict(yamlConf, &conf); err != nil {
		return nil, fmt.Errorf("blob: parsing bucket configuration: %s", redact(err.Error(), secretsIn(yamlConf)))
	}
	switch strings.ToUpper(string(conf.Type)) {
	case string(objstore.FILESYSTEM):
		var fs struct {
			Directory string `yaml:"directory"`
		}
		if err := remarshal(conf.Config, &fs); err != nil {
			return nil, fmt.Errorf("blob: FILESYSTEM configuration: %w", err)
		}
		if fs.Directory == "" {
			return nil, errors.New("blob: FILESYSTEM configuration needs a directory")
		}
		return openLocal(fs.Directory, conf.Prefix, logger)
	case string(objstore.MEMORY):
		return objstore.NewPrefixedBucket(NewMemBucket(), conf.Prefix), nil
	case string(objstore.S3):
		m, ok := conf.Config.(map[any]any)
		if conf.Config == nil {
			m, ok = map[any]any{}, true
		}
		if !ok {
			return nil, errors.New("blob: S3 configuration must be a mapping")
		}
		conf.Config = m
	}
	return openThanos(&conf, logger)
}

// openThanos opens a bucket through thanos' client factory, with Strata's
// S3 defaults, keeping secrets out of its errors.
func openThanos(conf *client.BucketConfig, logger *slog.Logger) (objstore.Bucket, error) {
	creds := "config"
	if m, ok := conf.Config.(map[any]any); ok && strings.EqualFold(string(conf.Type), string(objstore.S3)) {
		if _, set := m["max_retries"]; !set {
			m["max_retries"] = 1
		}
		if k, _ := m["access_key"].(string); k == "" {
			if _, set := m["aws_sdk_auth"]; !set {
				m["aws_sdk_auth"] = true
			}
		}
		if sdk, _ := m["aws_sdk_auth"].(bool); sdk {
			creds = "aws-sdk-default-chain"
		} else if k, _ := m["access_key"].(string); k != "" {
			creds = "static-keys"
		}
	}
	secrets := secretsOf(conf.Config)
	bkt, err := client.NewBucketFromConfig(kitLogger{logger, secrets}, conf, "strata", nil)
	if err != nil {
		return nil, fmt.Errorf("blob: opening %s bucket: %s", conf.Type, redact(err.Error(), secrets))
	}
	logger.Info("blob: opened bucket", "provider", string(bkt.Provider()), "bucket", bkt.Name(),
		"prefix", conf.Prefix, "credentials", creds)
	if bkt.Provider() == objstore.S3 {
		return s3Bucket{bkt}, nil
	}
	return bkt, nil
}

// LocalDir returns the directory of a spec that names a local bucket (a
// path or a file:// URL), so callers can keep their own files out of it.
func LocalDir(spec string) (string, bool) {
	s, err := parseSpec(spec)
	if err != nil || s.kind != specFile {
		return "", false
	}
	return s.dir, true
}

func openLocal(dir, prefix string, logger *slog.Logger) (objstore.Bucket, error) {
	b, err := NewLocalBucket(dir)
	if err != nil {
		return nil, err
	}
	logger.Info("blob: opened local bucket", "dir", b.Root(), "prefix", prefix)
	return objstore.NewPrefixedBucket(b, prefix), nil
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

type specKind int

const (
	specFile specKind = iota
	specMem
	specS3
)

// bucketSpec is a parsed Open spec.
type bucketSpec struct {
	kind     specKind
	dir      string // specFile
	bucket   string // specS3, and the rest
	prefix   string
	endpoint string
	region   string
	insecure bool
}

// parseSpec parses an Open spec. Its errors never repeat the spec, which
// could hold a secret pasted into the URL.
func parseSpec(spec string) (bucketSpec, error) {
	switch {
	case spec == "":
		return bucketSpec{}, errors.New("blob: empty bucket spec")
	case spec == "mem://":
		return bucketSpec{kind: specMem}, nil
	case !strings.Contains(spec, "://"):
		return bucketSpec{kind: specFile, dir: filepath.Clean(spec)}, nil
	}
	u, err := url.Parse(spec)
	if err != nil {
		return bucketSpec{}, errors.New("blob: bucket spec is not a valid URL")
	}
	if u.User != nil {
		return bucketSpec{}, errors.New("blob: bucket URLs must not hold credentials; " +
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use the AWS credential chain")
	}
	switch u.Scheme {
	case "file":
		if (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") || u.RawQuery != "" {
			return bucketSpec{}, errors.New("blob: file URLs take an absolute path (file:///abs/dir); use a plain path for a relative one")
		}
		return bucketSpec{kind: specFile, dir: filepath.Clean(filepath.FromSlash(u.Path))}, nil
	case "s3":
		return parseS3(u)
	}
	return bucketSpec{}, fmt.Errorf("blob: unsupported bucket scheme %q (want a path, file://, mem:// or s3://)", u.Scheme)
}

func parseS3(u *url.URL) (bucketSpec, error) {
	s := bucketSpec{kind: specS3, bucket: u.Host, prefix: strings.Trim(u.Path, "/")}
	if s.bucket == "" {
		return bucketSpec{}, errors.New("blob: s3 URL needs a bucket (s3://bucket/prefix)")
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			s.endpoint = v
		case "region":
			s.region = v
		case "insecure":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bucketSpec{}, fmt.Errorf("blob: s3 URL: insecure=%q is not a boolean", v)
			}
			s.insecure = b
		default:
			return bucketSpec{}, fmt.Errorf("blob: s3 URL: unknown parameter %q (want endpoint, region, insecure)", k)
		}
	}
	if s.endpoint == "" {
		s.endpoint = "s3.amazonaws.com"
		if s.region != "" {
			s.endpoint = "s3." + s.region + ".amazonaws.com"
		}
	}
	return s, nil
}

func remarshal(in, out any) error {
	b, err := yaml.Marshal(in)
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(b, out)
}

// secretKey matches configuration keys whose values must never be shown.
var secretKey = regexp.MustCompile(`(?i)secret|password|token|key|credential|service_account|sas`)

// secretsOf returns the string values under secret-looking keys of a parsed
// YAML configuration, at any depth.
func secretsOf(v any) []string {
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[any]any:
			for k, e := range v {
				walk(fmt.Sprint(k), e)
			}
		case map[string]any:
			for k, e := range v {
				walk(k, e)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case string:
			if secretKey.MatchString(key) && v != "" {
				out = append(out, v)
			}
		}
	}
	walk("", v)
	return out
}

// ConfigSecrets returns the values of an objstore YAML configuration that
// must never be shown (under keys that name secrets, passwords, tokens,
// keys or credentials), for callers that scrub their own output.
func ConfigSecrets(yamlConf []byte) []string { return secretsIn(yamlConf) }

// secretsIn is secretsOf for raw YAML that may not parse strictly.
func secretsIn(yamlConf []byte) []string {
	var v any
	if yaml.Unmarshal(yamlConf, &v) != nil {
		return nil
	}
	return secretsOf(v)
}

func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, "[REDACTED]")
	}
	return s
}
