# Myriarch: one entry point for building and testing.
# `make test` is what CI runs (.ci/run) and what the README names.
GO ?= go
PKGS := ./...

.PHONY: test check fmt vet unit bench fuzz
FUZZTIME ?= 200000x

test: check unit

check: fmt vet

fmt:
	@out=$$(find . -name '*.go' -not -path './node_modules/*' -not -path './.git/*' | xargs -r gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -count=1 $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./pkg/policy
