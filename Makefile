# Two commands: `make run` and `make test`. Everything they need is installed from the npm registry
# (Bun itself comes from the `bun` package), so a machine with only Node 20 + npm is enough.
BUN      := node_modules/.bin/bun
TSC      := node_modules/.bin/tsc
CONFIG   ?= conf/default.toml
STAMP    := node_modules/.install-stamp

.PHONY: run test typecheck lint format bench bench-scale bench-console build clean deps standalone install soak

# make install: PREFIX for the binary, the docs and sysusers.d; SYSCONFDIR for the config and the unit; DESTDIR
# stages it all under another root (packaging). BINARY: an executable already built (else `make build` runs first).
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR    ?= $(SYSCONFDIR)/systemd/system
BINARY     ?=

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

# Biome (biome.jsonc): the formatter's layout and the linter's recommended rules, those turned off named there with why
lint: deps
	node_modules/.bin/biome check --error-on-warnings .

# rewrites the tree to the formatter's layout and the imports' order (then `make lint` passes on it)
format: deps
	node_modules/.bin/biome check --write .

test: deps typecheck lint
	$(BUN) test --timeout 60000

# The long forms of the reliability suite (docs/reliability.md): 50 kills per crash test instead of 5, then the
# soak (SOAK_SECONDS, default 600) of mixed load while deposits and an update import arrive.
soak: deps
	CRASH_KILLS=$${CRASH_KILLS:-50} $(BUN) test --timeout 0 test/reliability/crash
	$(BUN) test/reliability/soak.ts

# Proves the repository stands alone: a fresh clone of HEAD in an empty temporary folder (nothing beside it)
# installs everything and passes `make test`. It tests what is committed, not the work tree.
standalone:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && git clone -q "$(CURDIR)" "$$tmp/doi-holdings" && \
	  echo "fresh clone in $$tmp/doi-holdings (nothing beside it)" && $(MAKE) -C "$$tmp/doi-holdings" test

# Prints every figure the issues name; takes about 17 minutes on 2 cores (deposits are generated once into .bench/).
bench: deps
	$(BUN) bench/ingest.ts
	$(BUN) bench/s3-latency.ts
	$(BUN) bench/updates-import.ts
	$(BUN) bench/harvest.ts
	$(BUN) bench/updates-api.ts
	$(BUN) bench/change-feed.ts
	$(BUN) bench/entitlements.ts
	$(BUN) bench/webhooks.ts
	$(BUN) bench/status-page.ts
	$(BUN) bench/address-limits.ts
	$(BUN) bench/operations.ts
	$(BUN) bench/deposit-reports.ts
	$(BUN) bench/access-count.ts

# Issue 48's figures at scale, in one run (not part of `make bench` nor `make test`): SCALE_MILLIONS million deposit
# records (default 20; fractions such as 0.5 for a quick run), generated once into .bench/scale-<N>M/; the first load,
# a re-deposit, new files, the daemon's start and memory, both APIs beside a 1M store, and bun:sqlite doing the same
# first load (SCALE_SQLITE=0 skips it: about half an hour at 20M).
bench-scale: deps
	$(BUN) bench/scale.ts

# Issue 52's console figure (not part of `make bench`: it loads SCALE_MILLIONS million holdings, default 20): the
# console page's p50/p99 at rest and while wrk loads the Updates API. SCALE_DATA=DIR takes the deposits of a data set
# made before (.bench/scale-20M) instead of generating them.
bench-console: deps
	$(BUN) bench/console.ts

build: deps
	$(BUN) scripts/build.ts dist/doi-holdings

# The unit's paths follow PREFIX and SYSCONFDIR. An existing config or secrets file is never overwritten: the
# example config goes beside it as doi-holdings.toml.example.
install: $(if $(BINARY),,build)
	install -D -m 755 "$(or $(BINARY),dist/doi-holdings)" "$(DESTDIR)$(PREFIX)/bin/doi-holdings"
	install -d -m 755 "$(DESTDIR)$(UNITDIR)"
	sed -e 's|/usr/local/bin/doi-holdings|$(PREFIX)/bin/doi-holdings|g' -e 's|/usr/local/share/doc|$(PREFIX)/share/doc|g' \
	  -e 's|/etc/doi-holdings|$(SYSCONFDIR)/doi-holdings|g' conf/doi-holdings.service > "$(DESTDIR)$(UNITDIR)/doi-holdings.service"
	chmod 644 "$(DESTDIR)$(UNITDIR)/doi-holdings.service"
	install -D -m 644 conf/doi-holdings.sysusers "$(DESTDIR)$(PREFIX)/lib/sysusers.d/doi-holdings.conf"
	install -d -m 755 "$(DESTDIR)$(SYSCONFDIR)/doi-holdings"
	@if [ -e "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/doi-holdings.toml" ]; then \
	  install -m 644 conf/doi-holdings.toml "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/doi-holdings.toml.example"; \
	  echo "kept $(DESTDIR)$(SYSCONFDIR)/doi-holdings/doi-holdings.toml; the new example is doi-holdings.toml.example"; \
	else install -m 644 conf/doi-holdings.toml "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/doi-holdings.toml"; fi
	@[ -e "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/secrets.env" ] || install -m 640 /dev/null "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/secrets.env"
	@# the daemon (user doi-holdings) reads the secrets file on reload; without the group yet, systemd-sysusers makes it
	@chgrp doi-holdings "$(DESTDIR)$(SYSCONFDIR)/doi-holdings/secrets.env" 2>/dev/null || \
	  echo "note: run systemd-sysusers, then chgrp doi-holdings $(SYSCONFDIR)/doi-holdings/secrets.env"
	install -D -m 644 README.md "$(DESTDIR)$(PREFIX)/share/doc/doi-holdings/README.md"
	install -D -m 644 -t "$(DESTDIR)$(PREFIX)/share/doc/doi-holdings/docs" docs/*.md docs/*.png
	install -D -m 644 conf/alerts.yml "$(DESTDIR)$(PREFIX)/share/doc/doi-holdings/alerts.yml"
	install -D -m 644 conf/grafana-dashboard.json "$(DESTDIR)$(PREFIX)/share/doc/doi-holdings/grafana-dashboard.json"

clean:
	rm -rf dist var/db
