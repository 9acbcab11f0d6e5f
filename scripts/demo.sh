#!/usr/bin/env bash
# The main job on the embedded default: the whole pipeline through DVC (dvc.yaml) -- download,
# curate (+ the spans-only baseline), assemble, validate, train every model, domains, transfer,
# report, the silver citation-linkage corpus. A second run reuses every finished stage; `dvc status`
# tells what is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
dvc repro
# `dvc metrics show` prints every metric of every stage as one very wide row; show the tables instead.
awk '/^## Per split/ {exit} /^## Table 2/ {on = 1} on' reports/dataset_stats.md
grep '^|' reports/table4.md
echo "dataset: data/citeworth/{train,dev,test}.jsonl (reports/dataset_stats.md)" \
     "quality: reports/quality/site/index.html  models: reports/table4.md" \
     "domains: reports/table5.md  transfer: reports/table6.md  silver: reports/silver/report.md"
