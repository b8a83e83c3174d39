# seckill: make demo runs a flash sale end to end; make test runs every test against real servers.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

# `make` with no target still runs `make up`, as it did when up was simply the first target;
# `make help` lists the targets. (help as the default would change what a bare `make` does.)
.DEFAULT_GOAL := up

# The servers `make up` provides. Override to test against others.
export DATABASE_URL ?= postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable
export REDIS_ADDR ?= 127.0.0.1:6379
ETCD_PORT ?= 2379
export ETCD_ENDPOINTS ?= http://127.0.0.1:$(ETCD_PORT)

# Under CI (CI=true) a test that cannot run here (a server's variable, a binary or root missing)
# fails instead of skipping (internal/testenv/missing); SECKILL_REQUIRE_ALL=1 asks for that
# anywhere. -short skips stay skips.
export SECKILL_REQUIRE_ALL ?= $(if $(filter true 1,$(CI)),1)

# The build that `api -version`, `loadtest -version` and the seckill_build_info metric report,
# as git sees this checkout, passed with -ldflags -X: go build stamps no revision in a linked
# git worktree nor in the Docker build context (internal/buildinfo explains). Recursive (=), so
# git runs only for the targets that use them; outside git they are empty and Go's stamp stands.
BUILDINFO := github.com/seckill/seckill/internal/buildinfo
GIT_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
GIT_TIME = $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
GIT_MODIFIED = $(shell git status --porcelain 2>/dev/null | grep -q . && echo true || echo false)
GIT_VERSION = $(shell git describe --tags --always 2>/dev/null)$(if $(filter true,$(GIT_MODIFIED)),+dirty)
VERSION_LDFLAGS = -X $(BUILDINFO).version=$(GIT_VERSION) -X $(BUILDINFO).revision=$(GIT_REVISION) \
	-X $(BUILDINFO).revisionTime=$(GIT_TIME) -X $(BUILDINFO).modified=$(GIT_MODIFIED)

.PHONY: help up down status test vet lint build image demo clean

help: ## list the targets and what they do
	@awk -F ':.*## ' '/^[A-Za-z0-9_-]+:.*## / { name[++n] = $$1; desc[n] = $$2; if (length($$1) > w) w = length($$1) } \
		END { for (i = 1; i <= n; i++) printf "  %-" w "s  %s\n", name[i], desc[i] }' $(MAKEFILE_LIST)

up: ## start (or reuse) PostgreSQL, Redis and etcd on loopback (what a bare `make` does)
	@scripts/infra.sh up

down: ## stop what `make up` started of PostgreSQL, Redis and etcd, nothing else
	@scripts/infra.sh down

status: ## whether PostgreSQL, Redis and etcd answer, and what `make up` started
	@scripts/infra.sh status

vet: ## go vet every package, and cmd/api's lab build
	$(GO) vet ./...
	$(GO) vet -tags lab ./cmd/api

# staticcheck, pinned (`go run pkg@version` fetches it from the module proxy; nothing to
# install), with every check on (staticcheck.conf), and gofmt.
STATICCHECK_VERSION ?= v0.8.2
lint: ## staticcheck (every check, staticcheck.conf) and gofmt; CI runs it
	@unformatted=$$(gofmt -l . 2>&1); if [ -n "$$unformatted" ]; then echo "gofmt -w these:"; echo "$$unformatted"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags lab ./cmd/api

test: up vet ## vet, then every test with the race detector against the real servers
	$(GO) test -race -count=1 -timeout 20m ./...

build: ## bin/api, bin/labapi (its lab build: -tags lab) and bin/loadtest, stamped with this checkout's git revision (bin/api -version)
	@mkdir -p bin
	$(GO) build -ldflags '$(VERSION_LDFLAGS)' -o bin/api ./cmd/api
	$(GO) build -tags lab -ldflags '$(VERSION_LDFLAGS)' -o bin/labapi ./cmd/api
	$(GO) build -ldflags '$(VERSION_LDFLAGS)' -o bin/loadtest ./cmd/loadtest

# seckill-api is the name docker compose gives the api service's image, so `docker compose up`
# runs this stamped image (until `docker compose up --build` rebuilds it, unstamped).
image: ## the API container image seckill-api, stamped like `make build` (needs Docker)
	docker build --build-arg VERSION='$(GIT_VERSION)' --build-arg REVISION='$(GIT_REVISION)' \
		--build-arg REVISION_TIME='$(GIT_TIME)' --build-arg MODIFIED='$(GIT_MODIFIED)' -t seckill-api .

clean: ## remove bin/
	rm -rf bin

# The API reference page (internal/apidoc): one HTML file, CSS inline, no script, that opens
# from disk with no network.
.PHONY: buyer-keys
# SECRETS_DIR is compose.yaml's directory of secret files (docs/deployment.md#docker-compose).
SECRETS_DIR ?= secrets
buyer-keys: ## the buyer-token key pair in $(SECRETS_DIR): buyer-jwks.json for the API, buyer-signing-key.pem for loadtest -sign-key
	$(GO) run ./cmd/loadtest keys -dir $(SECRETS_DIR)

.PHONY: docs-api
docs-api: ## docs/api.html, the API reference page, from the OpenAPI description internal/api/openapi.yaml
	@test -f internal/api/openapi.yaml || { echo "docs-api: internal/api/openapi.yaml does not exist; the page is written from it" >&2; exit 1; }
	$(GO) run ./internal/apidoc/cmd/apidoc -in internal/api/openapi.yaml -out docs/api.html

# Load testing (cmd/loadtest). demo and bench start their own three API processes.
.PHONY: bench bench-hot bench-locks loadtest-ci lab demo-ui

# make lab writes $(LAB_OUT).json and $(LAB_OUT).html (the report to open in a browser).
LAB_OUT ?= lab

demo: ## PostgreSQL, Redis and etcd up, three APIs locking in Redis and three in etcd, every strategy fired and audited, then one abandonment sale and one opening (about 85 s); fails on safety or an error answer, never on speed
	@GO=$(GO) scripts/demo.sh

demo-ui: ## PostgreSQL + Redis up, three APIs, and the live page (loadtest ui) on 127.0.0.1:8090; Ctrl-C stops
	@GO=$(GO) scripts/demo-ui.sh

bench: ## longer scenario, three runs, medians: writes bench/<date>-<host>.json and .md
	@GO=$(GO) scripts/bench.sh

bench-hot: ## one hot product, dlock, group commit on and off, 64 and 512 buyers, locks in Redis and in etcd (~9 min): bench/hot-<date>-<host>.md
	@GO=$(GO) scripts/bench-hot.sh

# bench-locks runs one package at a time (-p 1): two benchmarks at once would skew each other.
bench-locks: up ## dlock beside bsm/redislock, redsync and rueidislock, and beside etcd (1 and 3 members) and ZooKeeper (3 members), 5 interleaved rounds each (~2-3 min): bench/locks-<date>-<host>.txt
	@set -o pipefail; mkdir -p bench; f=bench/locks-$$(date -u +%Y-%m-%dT%H%M%SZ)-$$(hostname).txt; \
		$(GO) test -p 1 -run '^$$' -bench 'Peers|Backends' -benchtime 1x ./internal/dlock/ ./internal/etcdlock/ | tee $$f && \
		echo "recorded in $$f"

lab: up build ## the oversell lab: every lab lock in every scenario, a matrix and lab.html (a few minutes)
	bin/loadtest lab -json $(LAB_OUT).json -report $(LAB_OUT).html

loadtest-ci: up ## only the CI run of the harness (part of `make test` already)
	$(GO) test -race -count=1 -run TestCompareAgainstThreeAPIs -v ./cmd/loadtest/

# Multi-node Redis (docs/deployment.md): a three-master Redis Cluster on 7001-7003 and three
# independent Redis servers for Redlock on 7101-7103 (CLUSTER_PORTS, REDLOCK_PORTS), from the
# redis-server that `make up` installs. The tests do not use these: they start servers of their
# own on free ports (internal/testenv/servers).
.PHONY: cluster-up cluster-down cluster-status test-cluster

cluster-up: ## start (or reuse) the Redis Cluster, the Redlock servers and a 3-member etcd cluster; prints their addresses
	@scripts/cluster.sh up

cluster-down: ## stop what `make cluster-up` started, nothing else
	@scripts/cluster.sh down

cluster-status: ## which cluster and Redlock ports answer, and whether the cluster is ok
	@scripts/cluster.sh status

test-cluster: up ## only the multi-node tests (part of `make test` already)
	$(GO) test -race -count=1 -run 'TestSuiteOn|TestRedlock' -v ./internal/dlock/
	$(GO) test -race -count=1 -run 'TestTopology' -v ./cmd/loadtest/
	$(GO) test -race -count=1 -run 'Sentinel' -v ./internal/testenv/servers/ ./cmd/api/ ./internal/chaos/

# PostgreSQL with failover (docs/deployment.md, "PostgreSQL high availability"): two nodes managed by
# Debian's patroni (deploy/patroni/patroni.yml) on the etcd of `make up`, PostgreSQL on 5441 and
# 5442 (PATRONI_PG_PORTS), Patroni's REST API on 8011 and 8012 (PATRONI_API_PORTS). The tests start
# clusters of their own (internal/testenv/servers StartPatroni).
.PHONY: patroni-up patroni-down patroni-status

patroni-up: up ## start (or reuse) a two-node Patroni cluster (primary + synchronous standby) on loopback; prints its DATABASE_URL
	@scripts/patroni.sh up

patroni-down: ## stop what `make patroni-up` started; its data and etcd keys are removed
	@scripts/patroni.sh down

patroni-status: ## each Patroni node's role and state
	@scripts/patroni.sh status

# ZooKeeper for LOCK_BACKEND=zookeeper (docs/dlock.md, "Which lock service"): three members on
# loopback from Debian's zookeeper (client ports 2181-2183, ZK_PORTS), data in .run/zookeeper, kept
# across zookeeper-down. The tests start ensembles of their own (internal/testenv/servers
# StartZooKeeper).
.PHONY: zookeeper-up zookeeper-down zookeeper-status

zookeeper-up: ## start (or reuse) a three-member ZooKeeper ensemble on loopback; prints its ZOOKEEPER_SERVERS
	@scripts/zookeeper.sh up

zookeeper-down: ## stop what `make zookeeper-up` started; its data stays in .run/zookeeper
	@scripts/zookeeper.sh down

zookeeper-status: ## each ZooKeeper member's mode (leader, follower)
	@scripts/zookeeper.sh status

# Fault tests (internal/chaos): real API processes, faults injected mid-sale, audited in
# PostgreSQL. They run in `make test` too (about 30-60 s); this runs only them, verbosely.
.PHONY: chaos
chaos: up ## kill -9, SIGSTOP past the lease, Redis and PostgreSQL restarts, slow Redis, SIGTERM
	$(GO) test -race -count=1 -v ./internal/chaos/

# The game day (internal/gameday; docs/failures.md, "Game day"): the whole deployment as a team
# runs it on one machine (HAProxy, three APIs, PostgreSQL under Patroni, Redis with Sentinel, etcd,
# Prometheus, Alertmanager and a webhook), sold through HAProxy under the whole schedule of faults,
# each fault with several strategies; about 12 minutes. `make test` runs one cell of each fault.
.PHONY: gameday
GAMEDAY_PAGE ?= $(CURDIR)/bin/gameday.html
gameday: up ## the whole deployment under every fault of the schedule, sold through HAProxy: a table, and a page (bin/gameday.html)
	@mkdir -p $(dir $(GAMEDAY_PAGE))
	SECKILL_GAMEDAY=full SECKILL_GAMEDAY_PAGE=$(GAMEDAY_PAGE) $(GO) test -count=1 -timeout 20m -v -run '^TestGameDay$$' ./internal/gameday/
	@echo "game day page: $(GAMEDAY_PAGE)"

# Fuzzing (internal/httpapi): a short run of each fuzz target, one at a time, on one worker.
# Budgets are input counts, not durations: go1.26's coordinator can fail a timed run with a
# spurious "context deadline exceeded" (go.dev/issue/75804), and a count bounds the load.
# No -race here (it cuts throughput about twentyfold); `make test` runs the corpus with it.
# Failing inputs land in internal/httpapi/testdata/fuzz/ and run with every `go test`.
.PHONY: fuzz
FUZZ_EXECS ?= 2000
fuzz: up ## a short fuzz run of every fuzz target (FUZZ_EXECS inputs each, about 10 s)
	@set -e; for t in $$($(GO) test -list '^Fuzz' ./internal/httpapi/ | grep '^Fuzz'); do \
		echo "fuzz $$t"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 100x -parallel 1 ./internal/httpapi/; \
	done
