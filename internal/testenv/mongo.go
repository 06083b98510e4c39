package testenv

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MongoURI is the base URI of the test MongoDB-wire server, from
// CRAWLER_TEST_MONGO. It fails the test when unset: make test starts one.
func MongoURI(t testing.TB) string {
	t.Helper()
	uri := os.Getenv("CRAWLER_TEST_MONGO")
	if uri == "" {
		t.Fatal("testenv: CRAWLER_TEST_MONGO is not set; run make test, which starts an embedded FerretDB, or point it at a MongoDB")
	}
	return uri
}

// MongoDBURI returns a URI naming a database of its own for this test, and
// the database's name. The database is dropped when the test ends.
func MongoDBURI(t testing.TB) (uri, dbName string) {
	t.Helper()
	base := MongoURI(t)
	dbName = strings.ReplaceAll(UniquePrefix(t), "-", "_")
	if len(dbName) > 60 {
		dbName = dbName[len(dbName)-60:]
	}
	uri = withDatabase(base, dbName)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := mongo.Connect(options.Client().ApplyURI(base))
		if err != nil {
			return
		}
		defer c.Disconnect(ctx)
		_ = c.Database(dbName).Drop(ctx)
	})
	return uri, dbName
}

// Mongo connects to the test server and returns a database of this test's own.
func Mongo(t testing.TB) *mongo.Database {
	t.Helper()
	uri, name := MongoDBURI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatalf("testenv: connect %s: %v", uri, err)
	}
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatalf("testenv: no MongoDB-wire server at %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c.Database(name)
}

// withDatabase puts dbName in the path of a mongodb:// URI, keeping options.
func withDatabase(uri, dbName string) string {
	rest, query, _ := strings.Cut(uri, "?")
	scheme, hostsPath, ok := strings.Cut(rest, "://")
	if !ok {
		return uri
	}
	hosts, _, _ := strings.Cut(hostsPath, "/")
	out := scheme + "://" + hosts + "/" + dbName
	if query != "" {
		out += "?" + query
	}
	return out
}
