# Makefile: build, test, bench, demo and the compose stack. `make test` is
# what CI runs.
GO        ?= go
BIN       ?= bin/crawler
BENCH_BIN ?= bin/crawler-bench
PKGS      ?= ./...
TESTFLAGS ?= -race -count=1 -timeout 45m
# TESTPARALLEL: how many tests of one package run at once (those that call
# t.Parallel). The cluster tests mostly wait on processes they started,
# so more than the cores' count (go test's default) keeps both cores busy;
# a -parallel in TESTFLAGS wins.
TESTPARALLEL ?= 4
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.7.0
# Compose: `docker compose` (v2) when its plugin is installed, else docker-compose (v1).
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build test check fmt-check vet staticcheck deadcode layers fuzz k8s-check warcio bench demo up down clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/crawler

## test: formatting, vet, staticcheck, bounded fuzzing, and every test against
## a redis-server and an embedded FerretDB of its own (CRAWLER_TEST_REDIS,
## CRAWLER_TEST_MONGO name others)
test: check fuzz k8s-check warcio
	./scripts/with-test-servers.sh $(GO) test -parallel $(TESTPARALLEL) $(TESTFLAGS) $(PKGS)

## warcio: the WARC reader that is not ours (webrecorder's warcio.js), which
## the warc: sink's tests read their files back with (needs node and npm)
WARCIO := internal/testenv/warcio
warcio: $(WARCIO)/node_modules/warcio/package.json
$(WARCIO)/node_modules/warcio/package.json: $(WARCIO)/package-lock.json
	npm ci --silent --no-audit --no-fund --prefix $(WARCIO)
	@touch $@

## k8s-check: build deploy/k8s/base with kustomize, decode every object
## strictly into its k8s.io/api type, and check each flag and CRAWLER_*
## variable it gives against the crawler binary (a module of its own)
k8s-check: build
	cd deploy/k8s && CRAWLER_BIN=$(abspath $(BIN)) $(GO) test -count=1 ./...

check: fmt-check vet staticcheck deadcode layers

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd tools/ferretdb-runner && $(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

## layers: every package imports only downward (helpers, cluster,
## components, client, roles, test support, the bench harness, mains), as
## tools/layers lists them; no core package imports the bench or a main
layers:
	$(GO) test -count=1 ./tools/layers

## deadcode: no function the shipped mains cannot reach, but those
## scripts/deadcode.allow names with a reason
deadcode:
	GO=$(GO) ./scripts/deadcode.sh

## fuzz: every fuzz target for a bounded budget (FUZZTIME each: a count
## such as 30000x; a duration can trip golang/go#75804 before Go 1.27)
FUZZTIME ?= 30000x
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

## bench: every benchmark, each on a redis-server of its own, written to
## docs/benchmarks.md (about 15 minutes on 2 cores): first the one-site
## comparison with colly (needs go, to build the colly peer), then the rest.
## nice -n -10 when allowed (root); elsewhere nice says so and runs it anyway.
## The benchmarks are a binary of their own (cmd/crawler-bench), beside
## bin/crawler, which holds no benchmark or test code.
bench: build
	$(GO) build -o $(BENCH_BIN) ./cmd/crawler-bench
	nice -n -10 $(BENCH_BIN) --crawler $(BIN) report -o docs/benchmarks.md

## demo: crawl the built-in demo site on embedded defaults
demo: build
	$(BIN) demo

## up: build the image and start Redis, MongoDB, the demo site, a master and three slaves
up:
	VERSION=$(VERSION) $(COMPOSE) up -d --build
	@echo "submit the demo job: $(COMPOSE) run --rm submit"
	@echo "status page: http://127.0.0.1:8090  metrics: http://127.0.0.1:9090/metrics"

## down: stop and remove the containers (the redis-data and mongo-data volumes are kept)
down:
	$(COMPOSE) --profile example down

clean:
	rm -rf bin
