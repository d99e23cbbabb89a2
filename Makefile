# Packaging and documentation:
#
#   make wheels               every wheel (manylinux_2_17, musllinux_1_2; CPython
#                             3.10-3.13 and abi3) and the sdist into dist/, each
#                             smoke-tested without Rust (tools/wheels.py)
#   make docs                 the documentation site into build/site (mkdocs --strict)
#
# Fuzzing: streamwire-core with cargo-fuzz (needs a nightly toolchain and
# `cargo install cargo-fuzz`; what each target checks: fuzz/src/lib.rs), and
# the Python adapters with the hostile-upstream fuzzer (tests/hostile_fuzz.py:
# every fixture mutated by its structure, type confusion in every field, deep
# nesting, random chunkings and cancels, through sw.translate too).
#
#   make fuzz                 fuzz-rust, then fuzz-python
#   make fuzz-rust            each cargo-fuzz target for FUZZ_SECONDS (default 600)
#   make fuzz-python          the Python fuzzer for FUZZ_SECONDS, a fresh seed
#                             (FUZZ_SEED=n to replay one; PYTHON: the interpreter)
#   make fuzz-replay          each cargo-fuzz target over its committed corpus, once
#   make fuzz-seed            rewrite the committed seeds from fixtures/
#
# New inputs found by `make fuzz` go to fuzz/target/corpus/<target>/ (ignored
# by git); the committed fuzz/corpus/<target>/ is only read. To keep a
# finding, minimize it and copy it into fuzz/corpus/<target>/: the Rust test
# rust/core/tests/fuzz_corpus_replay.rs then replays it on every test run.
#
# The sanitizer defaults to none: both crates forbid unsafe code, so
# AddressSanitizer would mostly halve the executions. Use
# FUZZ_SANITIZER=address to cover the unsafe code inside dependencies.

FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= eventstream_raw eventstream_repaired sse shape json_array
FUZZ_SANITIZER ?= none
CARGO_FUZZ ?= cargo +nightly fuzz
FUZZ_WORK := $(CURDIR)/fuzz/target/corpus

PYTHON ?= python3
FUZZ_SEED ?=

.PHONY: wheels docs fuzz fuzz-rust fuzz-python fuzz-replay fuzz-seed

wheels:
	$(PYTHON) tools/wheels.py all

docs:
	$(PYTHON) -m mkdocs build --strict

fuzz: fuzz-rust fuzz-python

fuzz-python:
	$(PYTHON) tests/hostile_fuzz.py --seconds $(FUZZ_SECONDS) --keep-going $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

fuzz-rust:
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p "$(FUZZ_WORK)/$$t"; \
		echo "==> fuzz $$t for $(FUZZ_SECONDS)s"; \
		$(CARGO_FUZZ) run -s $(FUZZ_SANITIZER) $$t "$(FUZZ_WORK)/$$t" "$(CURDIR)/fuzz/corpus/$$t" -- \
			-max_total_time=$(FUZZ_SECONDS) -print_final_stats=1; \
	done

fuzz-replay:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "==> replay fuzz/corpus/$$t"; \
		$(CARGO_FUZZ) run -s $(FUZZ_SANITIZER) $$t "$(CURDIR)/fuzz/corpus/$$t" -- -runs=0; \
	done

fuzz-seed:
	python3 fuzz/seed_corpus.py
