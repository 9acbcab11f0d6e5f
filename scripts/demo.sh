#!/usr/bin/env bash
# The main job on the embedded default: the whole pipeline through DVC (dvc.yaml) -- download,
# curate (+ the spans-only baseline), assemble, validate, train every model, domains, transfer,
# report, the silver citation-linkage corpus, the cited-works index, the exports. A second run reuses every finished stage;
# `dvc status` tells what is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
dvc repro validate
# DVC runs one stage at a time. What follows validate needs nothing but what is built by now (the
# report aside), so those stages run side by side, as many at a time as there are cores, each its
# own dvc.yaml command in a process of its own (one torch thread: train.threads, domains.threads,
# transfer.threads), its output in logs/<stage>.log; `dvc commit` then records them as `dvc repro`
# would have (citeworth/orchestration/side_by_side.py). Longest first, so the cores finish together
# (this order ends with 2 cores within 1% of any other, on the walls of benchmarks/results/demo_phases.json's
# fresh_clone run): CPU seconds there PU 300 (it trains g, the no-weight sentence model, then the PU
# model), transfer 186, context 163, Solo 140, Transformer 133, sentence 126, domains 122, silver 42,
# the rest under 25. sentence_noweight comes last: it is the fit PU's g made, loaded from
# checkpoints/finished/ in seconds. `train` names any other model of params.yaml.
python -m citeworth.orchestration.side_by_side --jobs "$(getconf _NPROCESSORS_ONLN)" \
    train@pu domains transfer train@context train@solo train@sentence train@transformer silver \
    related_work works export train@crnn scaling train@tfidf_lr train@sentence_noweight train
dvc repro   # the report (Table 4); every other stage is current
# `dvc metrics show` prints every metric of every stage as one very wide row; show the tables instead.
awk '/^## Per split/ {exit} /^## Table 2/ {on = 1} on' reports/dataset_stats.md
grep '^|' reports/table4.md
echo "dataset: data/citeworth/{train,dev,test}.jsonl (reports/dataset_stats.md)" \
     "quality: reports/quality/site/index.html  models: reports/table4.md" \
     "domains: reports/table5.md  transfer: reports/table6.md  silver: reports/silver/report.md" \
     "cited works: data/works (citeworth check --suggest --works data/works)"
