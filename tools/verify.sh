#!/usr/bin/env bash
# `npm run verify`: the one thing CI runs. Fails on a stale generated file, formatting, lint,
# type errors or any failing test.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "generate"
# Builds helm on first use (config/deploy/stencil.yaml) and reads the k8s.io/kubernetes module
# (schemas/kubernetes/); not having helm or Go is an error here.
STENCIL_REQUIRE_HELM=1 STENCIL_REQUIRE_GO=1 npm run --silent generate
generated=(src/api/schemas.generated.ts src/engine/crd-schema/crd-validators.generated.ts charts/stencil/crds/
  config/deploy/ schemas/kubernetes/)
if [ -n "$(git status --porcelain -- "${generated[@]}")" ]; then
  git --no-pager diff -- "${generated[@]}" | head -50
  echo "generated files are out of date: run 'npm run generate' and commit the result" >&2
  exit 1
fi

step "format"
npm run --silent format:check
step "lint"
npm run --silent lint
step "typecheck"
npm run --silent typecheck
step "test"
npm test
