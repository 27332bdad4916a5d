# Two commands do all the set-up on a fresh clone: `make run` and `make test`.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json

.PHONY: run test build install bench clean typecheck

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

build: install
	npx tsc -p tsconfig.json
	npx tsc -p tsconfig.sandbox.json

typecheck: install
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p tsconfig.sandbox.json

run: build
	node dist/sdk/cli/kit.js demo

test: build
	npx vitest run

bench: build
	node dist/bench/run.js

clean:
	rm -rf dist
