# Two commands do all the set-up on a fresh clone: `make run` and `make test`.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json

.PHONY: run test build install bench clean typecheck languages

# Browser tests (test/browser/) drive Debian's Chromium through playwright-core; installed here
# when missing, from Debian's packages (as root, or through sudo).
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

$(NODE_MODULES): package.json package-lock.json
	@# npm install, not npm ci: the registry reachable here lacks optional packages for other platforms,
	@# which npm ci insists on; npm install still installs exactly what package-lock.json pins.
	npm install --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

build: install
	npx tsc -p tsconfig.json
	npx tsc -p tsconfig.sandbox.json
	node console/build.mjs
	node pages/build.mjs
	node dist/host/edge/build.js

typecheck: install
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p tsconfig.sandbox.json
	npx tsc -p tsconfig.tests.json

# Serves a demo world from .kit-demo/ (state and tokens survive restarts; delete the folder to start over).
run: build
	mkdir -p .kit-demo
	node dist/sdk/cli/kit.js world serve .kit-demo --world demo --port $${PORT:-4440}

$(CHROMIUM):
	@echo "installing Debian's chromium for the browser tests"
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium

# The attach tests run a small program in each language a world's apps are written in, with the
# language's own clients (test/attach/languages/). Their Debian packages are installed here when
# missing; one that cannot be installed is said so, and its language's tests skip saying why.
LANGUAGE_PACKAGES := python3-stripe python3-requests python3-aiohttp python3-httpx ruby php-cli php-curl golang-go
languages:
	@missing=$$(for p in $(LANGUAGE_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian's" $$missing "for the attach tests in other languages"; \
	  ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing) \
	    || echo "could not install" $$missing "from Debian's packages: their languages' attach tests skip"; \
	fi

test: build $(CHROMIUM) languages
	npx tsc -p tsconfig.tests.json
	node --test bench/results/render.test.mjs
	npx vitest run

# Not part of `make test`: minutes long; bench/http installs its peers into bench/peers on first use.
# Writes bench/results/latest.json and the "Latest" section of bench/README.md.
# The benchmarks' smoke runs first (test/bench/, vitest.bench.config.ts): a bench that no longer runs fails here, in seconds.
bench: build
	npx vitest run --config vitest.bench.config.ts
	node dist/bench/run.js

clean:
	rm -rf dist
