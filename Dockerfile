# syntax=docker/dockerfile:1
#
# The strata image: one static binary on Alpine, run as a non-root user.
# docker-compose.yml builds it; by hand:
#
#   docker build -t strata .
#   docker run --rm -p 6379:6379 -v strata-data:/data strata server --bind 0.0.0.0 --protected-mode no
#
# GO_VERSION is go.mod's go line, exactly: the golang images set
# GOTOOLCHAIN=local, so an older 1.26.x would refuse to build the module
# (integration/compose_test.go checks the two agree).
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Static (no cgo), reproducible paths (-trimpath), no symbol tables (-s -w).
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/strata ./cmd/strata

# Alpine rather than distroless or scratch: its busybox wget is what the
# compose health check uses to ask the metrics listener for /healthz.
FROM alpine:3.22
RUN mkdir -p /data && chown 65532:65532 /data
COPY --from=build /out/strata /strata
# uid/gid 65532 is distroless' "nonroot": nothing in the image runs as root.
USER 65532:65532
# /data is the default bucket (--dir ./data) when no --bucket is given:
# mount a volume there. No VOLUME line, so a server on S3 (as in
# docker-compose.yml) leaves no anonymous volume behind.
WORKDIR /data
# RESP, and the metrics/health listener (--metrics-addr, off unless given).
EXPOSE 6379 9121
ENTRYPOINT ["/strata"]
# Clients come through Docker's NAT, never from the container's loopback, so
# protected mode would refuse them all: off, as in the official redis image.
CMD ["server", "--bind", "0.0.0.0", "--protected-mode", "no"]
