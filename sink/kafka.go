package sink

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/store"
)

// kafkaDeliveryTimeout bounds how long a batch waits for the brokers
// before Put says so and the fan-out tries again (counted as retried).
// Records not yet sent are failed then; one already sent is retried by
// the idempotent producer, and a record sent again after the timeout is a
// duplicate with the same key, at least once.
const kafkaDeliveryTimeout = 10 * time.Second

// Kafka produces one record per item to a topic (key the fingerprint,
// value the item's JSON, headers job and version) and failures to
// "<topic>.failed", with an idempotent producer and acks from every
// in-sync replica.
type Kafka struct {
	client        *kgo.Client
	topic, failed string
}

// kafkaOptions reads a kafka:// URI: its brokers, topic, and options.
func kafkaOptions(s Spec) (brokers []string, topic string, useTLS bool, err error) {
	for _, b := range strings.Split(s.URL.Host, ",") {
		if b = strings.TrimSpace(b); b == "" {
			return nil, "", false, errors.New("kafka: an empty broker in the list; write kafka://HOST:PORT[,HOST:PORT…]/TOPIC")
		}
		if !strings.Contains(b, ":") {
			b += ":9092"
		}
		brokers = append(brokers, b)
	}
	topic = strings.Trim(s.URL.Path, "/")
	if len(brokers) == 0 || topic == "" || strings.Contains(topic, "/") {
		return nil, "", false, errors.New("kafka: write kafka://HOST:PORT[,HOST:PORT…]/TOPIC")
	}
	for k, v := range s.URL.Query() {
		if k != "tls" {
			return nil, "", false, fmt.Errorf("kafka: unknown option %q (known: tls)", k)
		}
		if useTLS, err = strconv.ParseBool(v[0]); err != nil {
			return nil, "", false, fmt.Errorf("kafka: ?tls=%s: not true or false", v[0])
		}
	}
	return brokers, topic, useTLS, nil
}

// checkKafka checks a kafka:// URI.
func checkKafka(s Spec) error {
	_, _, _, err := kafkaOptions(s)
	return err
}

// openKafka connects to the brokers and checks that both topics exist.
// USER:PASS in the URI authenticate with SASL PLAIN (give ?tls=true).
func openKafka(ctx context.Context, s Spec, log *zap.Logger) (Sink, error) {
	brokers, topic, useTLS, err := kafkaOptions(s)
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(kafkaDeliveryTimeout), kgo.ProducerLinger(5 * time.Millisecond), kgo.ClientID("crawler")}
	if useTLS {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	if u := s.URL.User; u != nil {
		pass, _ := u.Password()
		opts = append(opts, kgo.SASL(plain.Auth{User: u.Username(), Pass: pass}.AsMechanism()))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, redacted(fmt.Errorf("kafka: %w", err), s.raw)
	}
	k := &Kafka{client: client, topic: topic, failed: topic + ".failed"}
	if err := k.checkTopics(ctx); err != nil {
		client.Close()
		return nil, redacted(err, s.raw)
	}
	return k, nil
}

// checkTopics asks the brokers for both topics; a missing one is an error
// naming it (the sink does not create topics: their partitions,
// replication and compaction are the operator's choice).
func (k *Kafka) checkTopics(ctx context.Context) error {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range []string{k.topic, k.failed} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, k.client)
	if err != nil {
		return fmt.Errorf("kafka: ask the brokers for topic %s: %w", k.topic, err)
	}
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return fmt.Errorf("kafka: topic %s does not exist: create it (items go to %s, failures to %s; docs/sinks.md)", name, k.topic, k.failed)
			}
			return fmt.Errorf("kafka: topic %s: %w", name, err)
		}
	}
	return nil
}

// Put produces one record per item and waits until the brokers took them
// all (acks=all). A record the brokers refuse for good (too large) is
// refused; others are tried again by the caller.
func (k *Kafka) Put(ctx context.Context, recs []Record) []error {
	errs := make([]error, len(recs))
	var out []*kgo.Record
	var at []int
	for i, r := range recs {
		rec, err := k.record(r)
		if err != nil {
			errs[i] = err
			continue
		}
		out, at = append(out, rec), append(at, i)
	}
	ctx, cancel := context.WithTimeout(ctx, kafkaDeliveryTimeout)
	defer cancel()
	for j, res := range k.client.ProduceSync(ctx, out...) {
		if res.Err != nil {
			errs[at[j]] = kafkaError(fmt.Errorf("produce %s to %s: %w", recs[at[j]].Item.URL, k.topic, res.Err))
		}
	}
	return errs
}

// record is an item's Kafka record.
func (k *Kafka) record(r Record) (*kgo.Record, error) {
	it := r.Item
	value, err := json.Marshal(it)
	if err != nil {
		return nil, fmt.Errorf("item %s is not JSON: %w: %w", it.URL, err, ErrRefused)
	}
	return &kgo.Record{Key: []byte(it.Fingerprint), Value: value, Headers: []kgo.RecordHeader{
		{Key: "job", Value: []byte(it.Job)}, {Key: "version", Value: []byte(strconv.FormatInt(it.Version, 10))}}}, nil
}

// PutFailure produces a failure record to <topic>.failed.
func (k *Kafka) PutFailure(ctx context.Context, f store.Failure) error {
	value, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("failure of %s is not JSON: %w: %w", f.URL, err, ErrRefused)
	}
	rec := &kgo.Record{Topic: k.failed, Key: []byte(f.Fingerprint()), Value: value,
		Headers: []kgo.RecordHeader{{Key: "job", Value: []byte(f.Job)}}}
	ctx, cancel := context.WithTimeout(ctx, kafkaDeliveryTimeout)
	defer cancel()
	if err := k.client.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return kafkaError(fmt.Errorf("produce failure of %s to %s: %w", f.URL, k.failed, err))
	}
	return nil
}

// kafkaError marks errors no retry can help as ErrRefused: a record too
// large for the broker or the client.
func kafkaError(err error) error {
	if errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) {
		return fmt.Errorf("%w: %w", err, ErrRefused)
	}
	return err
}

// Close flushes what is buffered and closes the connections.
func (k *Kafka) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := k.client.Flush(ctx)
	k.client.Close()
	if err != nil {
		return fmt.Errorf("kafka: flush: %w", err)
	}
	return nil
}
