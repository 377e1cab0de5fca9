#!/usr/bin/env bash
# CI's check of the device kit: packs a kit from build/ (the CI build; gzip, for speed)
# and runs every step of it on emulated devices, from the unpacked archive, with the
# system's MPICH hidden. Fails when a step fails or does not run.
set -euo pipefail
cd "$(dirname "$0")/.."
work=build/device-kit-ci
rm -rf "$work"
scripts/device-kit.sh pack --build-dir build --compress gzip --out "$work"
scripts/device-kit.sh run --kit "$work/taskgrid-kit.tar.gz" --emulated --out "$work/report"
