# Multi-stage build of the seckill API: a static binary on a distroless base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What `api -version` and the seckill_build_info metric report. .git is not in the build
# context (.dockerignore), so go build stamps no VCS revision here: `make image` passes git's
# answer in these, and a build without them reports version (devel), revision unknown.
ARG VERSION
ARG REVISION
ARG REVISION_TIME
ARG MODIFIED
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w \
	-X github.com/seckill/seckill/internal/buildinfo.version=${VERSION} \
	-X github.com/seckill/seckill/internal/buildinfo.revision=${REVISION} \
	-X github.com/seckill/seckill/internal/buildinfo.revisionTime=${REVISION_TIME} \
	-X github.com/seckill/seckill/internal/buildinfo.modified=${MODIFIED}" \
	-o /out/api ./cmd/api

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/api /api
EXPOSE 8080
# Numeric (distroless's nonroot), so that Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/api"]
