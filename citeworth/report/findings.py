"""The paper's findings from Table 4 (§5), checked on this data: shown, not shown, or reversed.

Each claim compares models on the same test sentences, so it is judged by a paired bootstrap: the
test sentences are drawn again with replacement (the same draw for every model) and the difference
of the two scores (F1 or recall of the cite-worthy class) is taken in every draw. A claim is
**shown** when the 95% interval of every difference it makes lies above 0, **reversed** when every
one lies below 0, and **not shown** otherwise (the data cannot tell, or the pairs disagree). Each
model's per-sentence predictions are its ``confusion.csv`` (the train stage's plot file: actual and
predicted label of every test sentence, in test order).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from pydantic import Field

from citeworth.core.errors import StageFailed
from citeworth.core.params import Params
from citeworth.core.schema import CITE_WORTHY

RESAMPLES = 1000
_CHUNK = 50
VERDICTS = ("shown", "not shown", "reversed")


class Claim(Params):
    text: str
    """The paper's claim, in its words."""
    metric: str = "f1"
    """f1 or recall of the cite-worthy class."""
    better: list[str]
    """Models the paper found better..."""
    worse: list[str]
    """...than each of these (every pair is compared)."""


# The paper's findings from its Table 4 (§5), by this project's catalog names.
PAPER_CLAIMS = [
    Claim(text="Context is critical: the contextual model beats its single-sentence control (Solo)",
          better=["context"], worse=["solo"]),
    Claim(text="Class weighting helps: the class-weighted sentence model beats the unweighted one",
          better=["sentence"], worse=["sentence_noweight"]),
    Claim(text="PU learning performs better than no class weights", better=["pu"],
          worse=["sentence_noweight"]),
    Claim(text="PU learning has the highest recall of all models", metric="recall", better=["pu"],
          worse=["tfidf_lr", "crnn", "transformer", "sentence", "sentence_noweight", "solo", "context"]),
    Claim(text="Language model pre-training is useful: pretrained encoders beat the Transformer trained "
               "from scratch, the CRNN (Färber et al.) and logistic regression",
          better=["sentence", "solo", "context"], worse=["transformer", "crnn", "tfidf_lr"]),
]


class FindingsParams(Params):
    plots_dir: Path
    """The train stage's plots_dir: <model>/confusion.csv holds each test sentence's actual and
    predicted label."""
    path: Path
    """The findings as JSON."""
    table_path: Path
    """The findings as Markdown."""
    claims: list[Claim] = Field(default_factory=lambda: list(PAPER_CLAIMS))
    """The claims to check; a claim naming a model that was not trained is left out."""
    seed: int = 0
    """The bootstrap draws."""


def predictions(plots_dir: Path, names: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The test labels and every named model's predictions (1 = cite-worthy), from confusion.csv."""
    actual, predicted = None, {}
    for name in names:
        with open(Path(plots_dir) / name / "confusion.csv", encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        labels = np.array([row["actual"] == CITE_WORTHY for row in rows])
        if actual is not None and not np.array_equal(actual, labels):
            raise StageFailed(f"{name}'s confusion.csv holds other test sentences than the other models': "
                              "were they trained on different data?")
        actual, predicted[name] = labels, np.array([row["predicted"] == CITE_WORTHY for row in rows])
    return actual, predicted


def check_claims(claims: list[Claim], actual: np.ndarray, predicted: dict[str, np.ndarray],
                 seed: int = 0, resamples: int = RESAMPLES) -> list[dict]:
    """Each claim with its verdict and every pair's difference (×100) and 95% interval."""
    draws = _draws(len(actual), seed, resamples)
    results = []
    for claim in claims:
        pairs = [(a, b) for a in claim.better for b in claim.worse if a != b]
        if not pairs or not all(m in predicted for pair in pairs for m in pair):
            continue
        compared = [_difference(claim.metric, actual, predicted[a], predicted[b], draws) | {"better": a,
                                                                                             "worse": b}
                    for a, b in pairs]
        results.append({"claim": claim.text, "metric": claim.metric, "verdict": _verdict(compared),
                        "pairs": compared})
    return results


def _draws(n: int, seed: int, resamples: int) -> list[np.ndarray]:
    """Bootstrap counts (how often each test sentence is drawn), in chunks of draws."""
    rng = np.random.default_rng(seed)
    return [rng.multinomial(n, np.full(n, 1 / n), size=min(_CHUNK, resamples - start))
            for start in range(0, resamples, _CHUNK)]


def _score(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    denominator = 2 * tp + fp + fn if metric == "f1" else tp + fn
    numerator = 2 * tp if metric == "f1" else tp
    return np.divide(numerator, denominator, out=np.zeros(np.shape(tp)), where=denominator > 0)


def _counts(weights: np.ndarray, actual: np.ndarray, predicted: np.ndarray) -> tuple:
    return tuple(weights @ m.astype(np.int64) for m in (actual & predicted, ~actual & predicted,
                                                          actual & ~predicted))


def _difference(metric: str, actual: np.ndarray, a: np.ndarray, b: np.ndarray, draws: list) -> dict:
    def gap(weights: np.ndarray) -> np.ndarray:
        return _score(metric, *_counts(weights, actual, a)) - _score(metric, *_counts(weights, actual, b))

    observed = gap(np.ones(len(actual), dtype=np.int64))
    resampled = np.concatenate([gap(counts) for counts in draws])
    low, high = np.percentile(resampled, [2.5, 97.5])
    return {"difference": round(100 * float(observed), 2), "ci": [round(100 * float(low), 2),
                                                                  round(100 * float(high), 2)]}


def _verdict(pairs: list[dict]) -> str:
    if all(p["ci"][0] > 0 for p in pairs):
        return "shown"
    if all(p["ci"][1] < 0 for p in pairs):
        return "reversed"
    return "not shown"


def findings_table(results: list[dict], test_sentences: int) -> str:
    lines = ["# The paper's findings on this data", "",
             f"Paired bootstrap over the {test_sentences:,} test sentences (1,000 draws, the same for every "
             "model): the difference of the named score (×100) between the model the paper found better "
             "and each it found worse, with its 95% interval. Shown: every interval above 0; reversed: "
             "every interval below 0; not shown: otherwise.", "",
             "| Finding (the paper) | Verdict here | Score | Differences (95% CI) |", "|---|---|---|---|"]
    for result in results:
        pairs = "; ".join(f"{p['better']} − {p['worse']}: {p['difference']:+.2f} ({p['ci'][0]:+.2f} to "
                          f"{p['ci'][1]:+.2f})" for p in result["pairs"])
        lines.append(f"| {result['claim']} | **{result['verdict']}** | {result['metric']} | {pairs} |")
    return "\n".join(lines) + "\n"
