#!/usr/bin/env bash
# The main job on the embedded default: the whole pipeline through DVC (dvc.yaml) -- download,
# curate (+ the spans-only baseline), assemble, validate, train every model, domains, transfer,
# report, the silver citation-linkage corpus. A second run reuses every finished stage; `dvc status`
# tells what is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Table 4 models are independent: train them side by side, one process (one torch thread) per
# model and as many at a time as there are cores, instead of dvc repro's train@<model> cells one
# after another. Each process computes what its cell's `citeworth run train -S 'models=[NAME]'`
# does (the same bytes); `dvc commit` then records them in dvc.lock as that cell would have, so
# `dvc repro` finds them current (it would delete and retrain them otherwise). A model already
# trained on this data with these params and code is skipped by the train stage itself.
dvc repro validate
citeworth run train --workers "$(getconf _NPROCESSORS_ONLN)"
dvc commit --force train   # every train@<model> cell
dvc repro
# `dvc metrics show` prints every metric of every stage as one very wide row; show the tables instead.
awk '/^## Per split/ {exit} /^## Table 2/ {on = 1} on' reports/dataset_stats.md
grep '^|' reports/table4.md
echo "dataset: data/citeworth/{train,dev,test}.jsonl (reports/dataset_stats.md)" \
     "quality: reports/quality/site/index.html  models: reports/table4.md" \
     "domains: reports/table5.md  transfer: reports/table6.md  silver: reports/silver/report.md"
