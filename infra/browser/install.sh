#!/usr/bin/env bash
# Installs Debian's Chromium and its WebDriver for the console's browser tests (tests/browser):
# the browser comes from apt, never downloaded at test time.
# `make test` installs the same packages in its one apt run (the Makefile's TEST_DEBS).
exec bash "$(dirname "$0")/../apt-install.sh" chromium chromium-driver
