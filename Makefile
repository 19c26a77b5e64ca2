# Two commands: `make run` and `make test`. Everything they need is installed from the npm registry
# (Bun itself comes from the `bun` package), so a machine with only Node 20 + npm is enough.
BUN      := node_modules/.bin/bun
TSC      := node_modules/.bin/tsc
CONFIG   ?= conf/default.toml
STAMP    := node_modules/.install-stamp

.PHONY: run test typecheck bench build clean deps standalone

deps: $(STAMP)

# `npm install` rather than `npm ci`: npm 11 writes lock files that omit other platforms' optional
# packages (msgpackr-extract for darwin/win32) and then `npm ci` refuses them as out of sync.
# `npm install` still installs the versions pinned in package-lock.json.
$(STAMP): package.json package-lock.json
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

run: deps
	$(BUN) src/main.ts --config $(CONFIG)

typecheck: deps
	$(TSC) --noEmit -p tsconfig.json

test: deps typecheck
	$(BUN) test --timeout 60000

# Proves the repository stands alone: a fresh clone of HEAD in an empty temporary folder (nothing beside it)
# installs everything and passes `make test`. It tests what is committed, not the work tree.
standalone:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && git clone -q "$(CURDIR)" "$$tmp/doi-holdings" && \
	  echo "fresh clone in $$tmp/doi-holdings (nothing beside it)" && $(MAKE) -C "$$tmp/doi-holdings" test

# Prints every figure the issues name; takes about 8 minutes (deposits are generated once into .bench/).
bench: deps
	$(BUN) bench/ingest.ts
	$(BUN) bench/s3-latency.ts
	$(BUN) bench/updates-import.ts
	$(BUN) bench/updates-api.ts
	$(BUN) bench/entitlements.ts
	$(BUN) bench/status-page.ts

build: deps
	$(BUN) scripts/build.ts dist/doi-holdings

clean:
	rm -rf dist var/db
