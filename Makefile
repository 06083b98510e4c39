# Makefile: build, test, bench and demo. `make test` is what CI runs.
GO      ?= go
BIN     ?= bin/crawler
PKGS    ?= ./...
TESTFLAGS ?= -race -count=1 -timeout 30m

.PHONY: all build test check fmt-check vet unit bench demo clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/crawler

## test: formatting, vet, and every test against real Redis and a MongoDB-wire server
test: check
	./scripts/with-test-servers.sh $(GO) test $(TESTFLAGS) $(PKGS)

check: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd tools/ferretdb-runner && $(GO) vet ./...

## bench: the benchmark tables (dupefilter, assigner, crawl) against the local Redis
bench: build
	$(BIN) bench dedup
	$(BIN) bench assign
	$(BIN) bench crawl

## demo: crawl the built-in demo site on embedded defaults
demo: build
	$(BIN) demo

clean:
	rm -rf bin
