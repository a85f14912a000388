# lector: two commands matter. `make run` starts the whole service; `make test` runs every test.
# Both install what is missing first, so they work on a fresh clone with only Python 3.11.

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
VOICES := $(VENV)/share/lector/kokoro-v1.0-voices.npz

.PHONY: run test install lint bench images clean

$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "lector needs $(PYTHON)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# torch is pinned and installed on its own first: this machine's pip configuration serves the
# CPU wheel for exactly torch==2.13.0; anything else resolves to multi-GB CUDA builds.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip setuptools wheel
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test,qa]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

# Kokoro's v1.0 style packs (French, Spanish, Italian, Hindi... voices), from the kokoro sdist on
# PyPI into one archive inside the venv (speech/engines/kokoro/voice_archive.py says why there);
# redone when that module (which pins the release) changes, a no-op when the archive is current.
$(VOICES): speech/engines/kokoro/voice_archive.py | $(STAMP)
	bash infra/kokoro-voices.sh $(PY)
	touch $(VOICES)

install: $(STAMP) $(VOICES)

run: install
	$(VENV)/bin/lector run

# The Debian packages the suite needs: the Swift S3 server (infra/swift), Chromium for the console's
# tests (infra/browser), promtool (the alert rules and dashboard queries are checked with it), and
# the farm tests' hosts (infra/farm: namespaces, forwarders, cuts). They install in one apt run
# while pip installs the venv: on a fresh machine the two overlapped save about a minute.
TEST_DEBS := swift swift-proxy swift-account swift-container swift-object chromium chromium-driver \
             prometheus iproute2 socat nftables

test:
	@debs_log=$$(mktemp); bash infra/apt-install.sh $(TEST_DEBS) >"$$debs_log" 2>&1 & debs=$$!; \
	$(MAKE) --no-print-directory install; venv_rc=$$?; \
	wait $$debs; debs_rc=$$?; cat "$$debs_log"; rm -f "$$debs_log"; \
	[ $$venv_rc -eq 0 ] && [ $$debs_rc -eq 0 ]
	bash infra/test.sh

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture
	$(VENV)/bin/mypy

# Every self-hosted image under the vendor API contract's paths, one date-like tag:
# REGISTRY=... [TAG=...] [PUSH=1]
images:
	bash infra/build-images.sh

bench: install
	$(PY) -m bench.engine --quick

clean:
	rm -rf $(VENV) .lector var
