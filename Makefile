# gabarito: `make report` builds the site (embedded ArcadeDB), `make test` runs every test.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.gabarito-installed

.PHONY: report test test-fast install site fetch clean

report: $(STAMP)
	$(PY) -m gabarito.cli report

test: $(STAMP)
	$(PY) -m pytest -m "integration or not integration"

test-fast: $(STAMP)
	$(PY) -m pytest

site: $(STAMP)
	$(PY) -m gabarito.cli site

fetch: $(STAMP)
	$(PY) -m gabarito.cli fetch

install: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh
	touch $@

clean:
	rm -rf _site .cache/site
