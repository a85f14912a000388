#!/usr/bin/env bash
# Installs OpenStack Swift (with s3api) from Debian, the real S3 server the integration tests use.
# `make test` installs the same packages in its one apt run (the Makefile's TEST_DEBS).
exec bash "$(dirname "$0")/../apt-install.sh" swift swift-proxy swift-account swift-container swift-object
