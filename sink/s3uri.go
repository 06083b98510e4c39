package sink

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/crawler-dev/crawler/internal/bytesize"
)

// DefaultS3MaxSize is the largest items object, unless ?max_size= says
// otherwise: a batch whose lines pass it is written as several objects.
const DefaultS3MaxSize = 64 << 20

// awsEndpoint is where an s3:// URI without ?endpoint= goes.
const awsEndpoint = "s3.amazonaws.com"

// errS3NoBucket says what an s3:// URI lacks.
var errS3NoBucket = errors.New("s3: no bucket; write s3://BUCKET[/PREFIX][?endpoint=HOST:PORT]")

// s3Options is what an s3:// URI says.
type s3Options struct {
	bucket, prefix   string
	endpoint, region string
	secure           bool
	lookup           minio.BucketLookupType
	maxSize          int64
	// accessKey and secretKey come from the URI's userinfo; empty: from
	// the environment.
	accessKey, secretKey string
}

// s3Opts reads an s3:// URI:
// s3://[ACCESS_KEY:SECRET_KEY@]BUCKET[/PREFIX][?endpoint=…][&region=…][&max_size=…].
func s3Opts(s Spec) (s3Options, error) {
	u := s.URL
	o := s3Options{bucket: u.Host, prefix: strings.Trim(u.Path, "/"), endpoint: awsEndpoint, secure: true,
		maxSize: DefaultS3MaxSize}
	if u.Opaque != "" || o.bucket == "" {
		return o, errS3NoBucket
	}
	if u.Port() != "" {
		return o, fmt.Errorf("s3: %q is a bucket and a port; the server goes in ?endpoint=HOST:PORT", u.Host)
	}
	if err := s3utils.CheckValidBucketNameStrict(o.bucket); err != nil {
		return o, fmt.Errorf("s3: bucket %q: %w", o.bucket, err)
	}
	if ui := u.User; ui != nil {
		o.accessKey, o.secretKey = ui.Username(), ""
		if p, ok := ui.Password(); ok {
			o.secretKey = p
		}
		if o.accessKey == "" || o.secretKey == "" {
			return o, errors.New("s3: credentials in the URI are ACCESS_KEY:SECRET_KEY@, both given (the secret key percent-encoded: / as %2F); or leave them out and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
		}
	}
	for k, v := range u.Query() {
		if err := o.option(k, v[0]); err != nil {
			return o, err
		}
	}
	return o, nil
}

// option reads one query option of an s3:// URI.
func (o *s3Options) option(k, v string) error {
	switch k {
	case "endpoint":
		return o.setEndpoint(v)
	case "region":
		o.region = v
	case "max_size":
		n, err := bytesize.Parse(v)
		if err != nil || n < 1<<10 {
			return fmt.Errorf("s3: ?max_size=%s: not a size of at least 1KiB (e.g. 64MiB)", v)
		}
		o.maxSize = n
	case "window":
		return fmt.Errorf("s3: ?window= is not supported: an object holds one commit batch of a slave (at most 256 items or 100ms), written before the batch's tasks are acknowledged (docs/sinks.md)")
	default:
		return fmt.Errorf("s3: unknown option %q (known: endpoint, region, max_size)", k)
	}
	return nil
}

// setEndpoint reads ?endpoint=: http://HOST[:PORT] (plain HTTP),
// https://HOST[:PORT] or HOST[:PORT] (TLS). An S3-compatible server is
// addressed by path (http://HOST/BUCKET/KEY), AWS by virtual host.
func (o *s3Options) setEndpoint(v string) error {
	host := v
	switch {
	case strings.HasPrefix(v, "http://"):
		host, o.secure = strings.TrimPrefix(v, "http://"), false
	case strings.HasPrefix(v, "https://"):
		host = strings.TrimPrefix(v, "https://")
	case strings.Contains(v, "://"):
		return fmt.Errorf("s3: ?endpoint=%s: write HOST[:PORT], http://HOST[:PORT] or https://HOST[:PORT]", v)
	}
	host = strings.TrimSuffix(host, "/")
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return fmt.Errorf("s3: ?endpoint=%s: write HOST[:PORT], http://HOST[:PORT] or https://HOST[:PORT]", v)
	}
	if h, p, err := net.SplitHostPort(host); err == nil && (h == "" || p == "") {
		return fmt.Errorf("s3: ?endpoint=%s: a host and a port", v)
	}
	o.endpoint, o.lookup = host, minio.BucketLookupPath
	return nil
}

// creds are the URI's keys, else the environment's: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), MINIO_ROOT_USER and
// MINIO_ROOT_PASSWORD, the AWS shared credentials file; on AWS (no
// ?endpoint=) the instance's or pod's IAM role last.
func (o s3Options) creds() *credentials.Credentials {
	if o.accessKey != "" {
		return credentials.NewStaticV4(o.accessKey, o.secretKey, "")
	}
	chain := []credentials.Provider{&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{}}
	if o.endpoint == awsEndpoint {
		chain = append(chain, &credentials.IAM{})
	}
	return credentials.NewChainCredentials(chain)
}

// checkS3 checks an s3:// URI.
func checkS3(s Spec) error {
	_, err := s3Opts(s)
	return err
}
