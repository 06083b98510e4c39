# The crawler image: one static binary on a distroless base, run as a
# non-root user. Every role (master, slave, client, demo) is a subcommand:
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t crawler .
#   docker run --rm crawler version
#
# Only classic Dockerfile syntax is used (no RUN --mount), so the legacy
# builder of docker-compose v1 builds it as well as BuildKit does.

# GO_VERSION follows the go line of go.mod (major.minor);
# TestDockerfile_GoVersion in cmd/crawler checks that they agree.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
# Build with the image's Go; never download another toolchain.
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /src
# Modules first, so a change of source code reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/crawler ./cmd/crawler \
 && /out/crawler version

# static: no libc, no shell, no package manager; nonroot: uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/crawler /usr/local/bin/crawler
USER nonroot:nonroot
# demo site, master status page + JSON API, Prometheus metrics; each is
# bound only when its flag asks for it (see docker-compose.yml).
EXPOSE 8080 8090 9090
ENTRYPOINT ["/usr/local/bin/crawler"]
CMD ["--help"]
