#!/usr/bin/env bash
# The study at scale (params/study.yaml): the whole chain on every real paper of the mirror, in a
# workspace of its own (`citeworth profile open study`: a git worktree at HEAD sharing the project's
# DVC cache; the demo's outputs in this checkout are never touched), then its results committed on
# branch runs/study (`citeworth profile version study`). A second run reuses every finished stage.
#
# Each phase runs its stages side by side, as many at a time as there are cores, each its own
# dvc.yaml command in a process of its own (citeworth.orchestration.side_by_side), recorded in the
# workspace's dvc.lock as `dvc repro` records them; each stage's log, wall and CPU seconds and peak
# memory land in the workspace's logs/ (<stage>.log, <stage>.cost.json: benchmarks/study.py reads them).
# CITEWORTH_PROFILE=study-gpu runs params/study-gpu.yaml (the paper's budgets on a GPU) the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
project="$PWD"
profile="${CITEWORTH_PROFILE:-study}"
jobs="$(getconf _NPROCESSORS_ONLN)"
# One build of a profile at a time: a second `make study` started meanwhile stops here, before it
# could move the workspace under the first (flock, where the system has it).
if command -v flock >/dev/null; then
    mkdir -p .dvc/tmp
    exec 9>".dvc/tmp/profile-$profile.lock"
    flock --nonblock 9 || { echo "another make $profile is running in this project" >&2; exit 1; }
fi
workspace="$(citeworth profile open "$profile")"
echo "$profile workspace: $workspace"
cd "$workspace"
phase() { python -m citeworth.orchestration.side_by_side --jobs "$jobs" "$@"; }
phase download pdf2tei
phase curate@citeworth curate@baseline
phase assemble@citeworth assemble@baseline
phase validate
# Longest first, by the walls two at a time in benchmarks/results/study.json: silver (~24 min: it
# embeds ~45,000 texts with the frozen MiniLM before its 300 steps), then PU, which trains g, the
# no-weight sentence model's fit, then the PU model. train@solo finishes before the scaling stage
# reaches its largest Solo point, which is that fit (loaded, not trained again); the no-weight model
# comes last and loads PU's g. In this order the whole `make study` took 84.7 minutes from a fresh
# clone (silver last, on less data, it had taken 88.5).
phase silver train@pu train@solo domains scaling train@context train@transformer train@sentence \
    export train@crnn transfer train@sentence_noweight works related_work train@tfidf_lr train
dvc repro   # the report (Table 4 and the findings); every other stage is current
cd "$project"
citeworth profile version "$profile"
# Its best model as authors install it: exported (ONNX, model card) and packaged into dist/.
citeworth model export "$profile" --out "exported/$profile"
citeworth model package "exported/$profile" --dist dist
awk '/^## Per split/ {exit} /^## Table 2/ {on = 1} on' "$workspace/reports/dataset_stats.md"
grep '^|' "$workspace/reports/table4.md"
grep '^|' "$workspace/reports/findings.md"
echo "$profile: $workspace (branch runs/$profile); Table 4: reports/table4.md, findings: reports/findings.md," \
     "Table 5: reports/table5.md, scaling: reports/scaling.md and plots/scaling/scaling.png;" \
     "check a draft with its best model: citeworth check DRAFT --model $profile;" \
     "its wheel for authors: dist/citeworth_model_${profile//-/_}_*.whl"
