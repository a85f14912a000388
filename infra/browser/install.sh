#!/usr/bin/env bash
# Installs Debian's Chromium and its WebDriver for the console's browser tests (tests/browser):
# the browser comes from apt, never downloaded at test time.
exec bash "$(dirname "$0")/../apt-install.sh" chromium chromium-driver
