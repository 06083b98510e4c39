package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/store"
)

// S3 writes items as JSON Lines objects to a bucket: one object per job
// per batch the caller puts (a slave puts one commit batch at a time), cut
// at max_size; failures as one JSON object per page, replaced when the
// page fails again and dropped when it is stored on retry. Put returns
// once the objects holding the records are written: S3 answers a PUT (or
// the last step of a multipart upload) only once the object is durable.
type S3 struct {
	client *minio.Client
	opts   s3Options
	origin string // host-pid of this process: objects of two processes never share a name
	seq    atomic.Int64
	log    *zap.Logger
	copies *warcCopies // nil without a warc: sink beside it
}

// s3PutTimeout bounds one object's upload: past it Put says so and the
// fan-out tries again (counted as retried), so a server that hangs shows
// in the log and the metrics as one that is down.
const s3PutTimeout = 2 * time.Minute

// s3PartSize is the part size of a multipart upload: an object larger is
// written in parts of this size (S3's least is 5MiB).
const s3PartSize = 5 << 20

// openS3 connects to the endpoint and checks that the bucket is there.
func openS3(ctx context.Context, s Spec, log *zap.Logger) (Sink, error) {
	o, err := s3Opts(s)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(o.endpoint, &minio.Options{Creds: o.creds(), Secure: o.secure, Region: o.region,
		BucketLookup: o.lookup, MaxRetries: 3})
	if err != nil {
		return nil, redacted(fmt.Errorf("s3: %w", err), s.raw)
	}
	s3 := &S3{client: client, opts: o, origin: processName(), log: log}
	if err := s3.checkBucket(ctx); err != nil {
		return nil, redacted(err, s.raw)
	}
	return s3, nil
}

// checkBucket asks the server whether the bucket exists: a missing one is
// an error naming it (the sink does not create buckets: their region,
// versioning and lifecycle are the operator's choice).
func (s *S3) checkBucket(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ok, err := s.client.BucketExists(ctx, s.opts.bucket)
	if err != nil {
		return fmt.Errorf("s3: ask %s for bucket %s: %w", s.opts.endpoint, s.opts.bucket, err)
	}
	if !ok {
		return fmt.Errorf("s3: bucket %s does not exist at %s: create it, or name another (docs/sinks.md)", s.opts.bucket, s.opts.endpoint)
	}
	return nil
}

// processName names this process in object names: its host and pid.
func processName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", safeName(host), os.Getpid())
}

// Put writes recs as JSON Lines, one object per job (more when a job's
// lines pass max_size), and returns once every object is written. A
// record whose object could not be written gets the error, to be sent
// again; a page that answered 304 has no news for the objects and is
// taken as it is. A stored retried page's failure record is dropped.
func (s *S3) Put(ctx context.Context, recs []Record) []error {
	errs := make([]error, len(recs))
	now := time.Now().UTC()
	for _, obj := range s.objects(recs, errs) {
		if err := s.upload(ctx, s.itemKey(obj.job, now), obj.body.Bytes()); err != nil {
			for _, i := range obj.at {
				errs[i] = err
			}
		}
		putBuffer(obj.body)
	}
	for i, r := range recs {
		if errs[i] == nil && r.Retried {
			errs[i] = s.remove(ctx, s.failureKey(r.Item.Job, r.Item.Fingerprint))
		}
	}
	return errs
}

// s3Object is one object's lines: the records at these indexes, of one job.
type s3Object struct {
	job  string
	body *bytes.Buffer
	at   []int
}

// objects groups recs' lines into objects by job, each at most max_size
// (a line larger than that is an object of its own). A record that is
// not JSON is refused in errs.
func (s *S3) objects(recs []Record, errs []error) []*s3Object {
	var out []*s3Object
	open := map[string]*s3Object{}
	for i, r := range recs {
		if r.NotModified {
			continue
		}
		line, err := json.Marshal(r.Item)
		if err != nil {
			errs[i] = fmt.Errorf("item %s is not JSON: %w: %w", r.Item.URL, err, ErrRefused)
			continue
		}
		o := open[r.Item.Job]
		if o == nil || o.body.Len() > 0 && int64(o.body.Len()+len(line)+1) > s.opts.maxSize {
			o = &s3Object{job: r.Item.Job, body: getBuffer()}
			open[r.Item.Job] = o
			out = append(out, o)
		}
		o.body.Write(line)
		o.body.WriteByte('\n')
		o.at = append(o.at, i)
	}
	return out
}

// itemKey names a new items object of job:
// PREFIX/JOB/items/YYYY/MM/DD/HH/<time>-<host>-<pid>-<seq>.jsonl, so that
// a listing in name order is in time order, and a day's or an hour's
// objects share a prefix.
func (s *S3) itemKey(job string, now time.Time) string {
	name := fmt.Sprintf("%s-%s-%06d.jsonl", now.Format("20060102T150405.000Z"), s.origin, s.seq.Add(1))
	return path.Join(s.opts.prefix, job, "items", now.Format("2006/01/02/15"), name)
}

// failureKey names the failure record of a page: PREFIX/JOB/failed/FP.json.
func (s *S3) failureKey(job, fp string) string {
	return path.Join(s.opts.prefix, job, "failed", fp+".json")
}

// upload writes body as the object key; minio-go writes one larger than
// s3PartSize as a multipart upload.
func (s *S3) upload(ctx context.Context, key string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s3PutTimeout)
	defer cancel()
	_, err := s.client.PutObject(ctx, s.opts.bucket, key, bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "application/x-ndjson", PartSize: s3PartSize})
	if err != nil {
		return s3Error(fmt.Errorf("put s3://%s/%s: %w", s.opts.bucket, key, err))
	}
	return nil
}

// remove drops an object; one that is not there is no error.
func (s *S3) remove(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s3PutTimeout)
	defer cancel()
	if err := s.client.RemoveObject(ctx, s.opts.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s3Error(fmt.Errorf("remove s3://%s/%s: %w", s.opts.bucket, key, err))
	}
	return nil
}

// PutFailure writes the failure's JSON as the page's failure object,
// replacing an earlier one.
func (s *S3) PutFailure(ctx context.Context, f store.Failure) error {
	body, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("failure of %s is not JSON: %w: %w", f.URL, err, ErrRefused)
	}
	return s.upload(ctx, s.failureKey(f.Job, f.Fingerprint()), body)
}

// s3Error marks errors no retry can help as ErrRefused: an object larger
// than S3 takes. A missing bucket or a denied write is left to retry: an
// operator can fix those while the slave holds the tasks.
func s3Error(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.EntityTooLarge:
		return fmt.Errorf("%w: %w", err, ErrRefused)
	}
	return err
}

// Close waits for the WARC files still to copy (up to s3CloseTimeout);
// the items were all written when Put returned.
func (s *S3) Close() error {
	if s.copies != nil {
		return s.copies.close()
	}
	return nil
}
