#!/usr/bin/env bash
# The embedded model files are the unchanged copies listed in models/SOURCES.md.
set -eu
SRC=$2
cd "$SRC/models"
for f in stories260K.bin tok512.bin; do
  want=$(grep "^| $f " SOURCES.md | awk -F'|' '{gsub(/ /,"",$5); print $5}')
  got=$(sha256sum "$f" | cut -d' ' -f1)
  [ "$want" = "$got" ] || { echo "FAIL $f: sha256 $got, SOURCES.md says $want"; exit 1; }
  echo "ok   $f $got"
done
