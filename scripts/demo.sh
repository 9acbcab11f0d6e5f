#!/usr/bin/env bash
# The main job on the embedded default: fetch the demo corpus, build the CiteWorth dataset from it.
set -euo pipefail
cd "$(dirname "$0")/.."
citeworth run download
citeworth run curate
citeworth run assemble
echo "dataset: data/citeworth/{train,dev,test}.jsonl  stats: reports/dataset_stats.md"
