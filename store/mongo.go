package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/crawler-dev/crawler/internal/redact"
)

// DefaultDatabase is used when the URI names no database.
const DefaultDatabase = "crawler"

// Mongo stores items and failures in MongoDB.
type Mongo struct {
	client *mongo.Client
	items  *mongo.Collection
	failed *mongo.Collection
}

// OpenMongo connects to uri; the database is the URI's path (default
// "crawler"). It pings the server so a wrong address fails here, and makes
// sure the job index exists.
func OpenMongo(ctx context.Context, uri string) (*Mongo, error) {
	dbName, err := databaseName(uri)
	if err != nil {
		return nil, err
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		return nil, fmt.Errorf("mongo connect %s: %w", Redact(uri), err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx, nil); err != nil {
		_ = client.Disconnect(ctx)
		return nil, unreachable(uri, err)
	}
	db := client.Database(dbName)
	m := &Mongo{client: client, items: db.Collection("items"), failed: db.Collection("failed")}
	if err := m.ensureIndexes(ctx); err != nil {
		_ = client.Disconnect(ctx)
		return nil, err
	}
	return m, nil
}

// ErrUnreachable is returned by OpenMongo when no server of the URI
// answered.
var ErrUnreachable = errors.New("no MongoDB answered")

// unreachable says which servers were tried and what each answered, in
// place of the driver's server-selection error and topology dump.
func unreachable(uri string, err error) error {
	var sel topology.ServerSelectionError
	if !errors.As(err, &sel) {
		return fmt.Errorf("mongo ping %s: %w", Redact(uri), err)
	}
	tried := make([]string, 0, len(sel.Desc.Servers))
	for _, s := range sel.Desc.Servers {
		why := "no answer"
		if s.LastError != nil {
			why = lastCause(s.LastError)
		}
		tried = append(tried, fmt.Sprintf("%s: %s", s.Addr, why))
	}
	return fmt.Errorf("%w at %s (tried %s)", ErrUnreachable, Redact(uri), redact.Text(strings.Join(tried, "; "), uri))
}

// lastCause is the end of a chain of network errors, "connection
// refused" rather than the dial's every layer.
func lastCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "dial ") {
		return msg[i+2:]
	}
	return msg
}

func (m *Mongo) ensureIndexes(ctx context.Context) error {
	for _, c := range []*mongo.Collection{m.items, m.failed} {
		_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "job", Value: 1}}})
		if err != nil {
			return fmt.Errorf("mongo index %s.job: %w", c.Name(), err)
		}
	}
	return nil
}

// databaseName reads the database from a mongodb:// URI's path.
func databaseName(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", fmt.Errorf("--mongo: %q is not a mongodb:// URI", Redact(uri))
	}
	if name := strings.Trim(u.Path, "/"); name != "" {
		return name, nil
	}
	return DefaultDatabase, nil
}

// Redact hides the credentials of a URI, for logs and errors: its
// password and the values of its secret query options. It is redact.URL,
// the one function every output of a URI goes through.
func Redact(uri string) string { return redact.URL(uri) }

// SaveItem stores it. The first write is an insert; if the item exists (a
// redelivered task, or a re-crawl after the dedup window) it is replaced.
func (m *Mongo) SaveItem(ctx context.Context, it Item) error {
	return upsert(ctx, m.items, it.ID, it)
}

// SaveFailure records f, replacing an earlier record of the same page.
func (m *Mongo) SaveFailure(ctx context.Context, f Failure) error {
	return upsert(ctx, m.failed, f.ID, f)
}

// upsert inserts doc, and replaces it when _id exists. Inserting first keeps
// the common case a plain insert (FerretDB updates are slow).
func upsert(ctx context.Context, c *mongo.Collection, id string, doc any) error {
	_, err := c.InsertOne(ctx, doc)
	if err == nil {
		return nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("insert %s %s: %w", c.Name(), id, err)
	}
	if _, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, doc); err != nil {
		return fmt.Errorf("replace %s %s: %w", c.Name(), id, err)
	}
	return nil
}

// DeleteFailure removes a failure record, when its page is retried.
func (m *Mongo) DeleteFailure(ctx context.Context, id string) error {
	if _, err := m.failed.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return fmt.Errorf("delete failed %s: %w", id, err)
	}
	return nil
}

// Failures returns a job's failure records.
func (m *Mongo) Failures(ctx context.Context, job string) ([]Failure, error) {
	cur, err := m.failed.Find(ctx, bson.D{{Key: "job", Value: job}})
	if err != nil {
		return nil, fmt.Errorf("find failed of %s: %w", job, err)
	}
	var out []Failure
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read failed of %s: %w", job, err)
	}
	return out, nil
}

// Close disconnects from MongoDB.
func (m *Mongo) Close(ctx context.Context) error {
	if err := m.client.Disconnect(ctx); err != nil && !errors.Is(err, mongo.ErrClientDisconnected) {
		return fmt.Errorf("mongo disconnect: %w", err)
	}
	return nil
}
