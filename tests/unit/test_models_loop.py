"""The training loop: class weights, the loss, warmup, batching, early stopping, resumable checkpoints."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import torch
from sklearn.utils.class_weight import compute_class_weight
from torch.nn import functional as F

from citeworth.models import data, loop
from citeworth.models.crnn import CRNN
from citeworth.models.spec import CrnnParams, OptimParams

pytestmark = pytest.mark.usefixtures("torch_one_thread")  # toy models, busy machine

VOCAB = 50


def test_balanced_class_weights_are_sklearns():
    y = np.array([0, 0, 0, 1, 0, 1, 0, 0])
    expected = compute_class_weight("balanced", classes=np.array([0, 1]), y=y)
    assert data.balanced_class_weights(y) == pytest.approx(expected)
    assert data.balanced_class_weights(np.array([0, 0])) == pytest.approx([0.5, 1.0])  # absent class: 1


def test_weighted_loss_is_torch_class_weighted_mean_and_sample_weighted_mean():
    torch.manual_seed(0)
    logits, labels = torch.randn(6, 2), torch.tensor([0, 1, 1, 0, 0, 1])
    class_w = torch.tensor([0.75, 1.5])
    expected = F.cross_entropy(logits, labels, weight=class_w)
    assert loop.weighted_loss(logits, labels, torch.ones(6), class_w) == pytest.approx(float(expected))
    sample_w = torch.tensor([1.0, 0.2, 0.8, 0.5, 1.0, 0.0])
    per_row = F.cross_entropy(logits, labels, reduction="none")
    assert loop.weighted_loss(logits, labels, sample_w, torch.ones(2)) == pytest.approx(
        float((per_row * sample_w).mean()))


def test_linear_warmup_then_linear_decay():
    factor = loop.linear_warmup(warmup=4, total=10)
    values = [factor(s) for s in range(11)]
    assert values[:4] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert values[4] == pytest.approx(1.0) and values[10] == 0.0
    assert all(a >= b for a, b in zip(values[4:], values[5:], strict=False))


def items(n: int, seed: int = 0) -> list[loop.Item]:
    """Sentences of random token ids; the label is whether token 7 occurs (learnable)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ids = rng.integers(3, VOCAB, size=int(rng.integers(4, 12))).tolist()
        out.append(loop.Item([1, *ids, 2], [int(7 in ids)], [1.0], [i]))
    return out


class TokenAdapter(loop.Adapter):
    def items(self, records, weights=None):
        raise NotImplementedError

    def collate(self, batch_items):
        ids, mask = loop.pad([it.input_ids for it in batch_items], 0)
        labels, weights, index = loop.flat_targets(batch_items)
        return loop.Batch({"input_ids": ids, "attention_mask": mask}, labels, weights, index)


def test_length_batches_cover_every_item_once_and_are_deterministic():
    its = items(103)
    a = loop.length_batches(its, 8, np.random.default_rng([1, 0]))
    b = loop.length_batches(its, 8, np.random.default_rng([1, 0]))
    assert a == b and sorted(i for batch in a for i in batch) == list(range(103))
    ordered = loop.length_batches(its, 8, None)
    lengths = [len(its[i].input_ids) for batch in ordered for i in batch]
    assert lengths == sorted(lengths)


def crnn() -> CRNN:
    torch.manual_seed(0)
    return CRNN(VOCAB, 0, CrnnParams(embedding_dim=8, filters=4, kernel_sizes=[3], hidden=8, dropout=0.3))


def optim(**kw) -> OptimParams:
    values = {"batch_size": 8, "epochs": 3, "lr": 0.01, "warmup_steps": 2, "device": "cpu",
              "eval_batch_size": 16}
    return OptimParams(**{**values, **kw})


def state(module) -> dict:
    return {k: v.clone() for k, v in module.state_dict().items()}


def test_interrupted_training_resumes_to_the_same_weights(tmp_path, monkeypatch):
    train = items(60)
    dev = loop.DevSet(items(20, seed=1), np.array([it.labels[0] for it in items(20, seed=1)]))
    params = optim(checkpoint_every=3, grad_accum=2, patience=10)
    straight = crnn()
    loop.fit(straight, TokenAdapter(), train, dev, params, seed=3, class_weights=np.ones(2))

    original = loop._Trainer._optimizer_step
    calls = {"n": 0}

    def crash_at_step_8(self):
        calls["n"] += 1
        if calls["n"] == 8:
            raise KeyboardInterrupt("simulated kill")
        original(self)

    monkeypatch.setattr(loop._Trainer, "_optimizer_step", crash_at_step_8)
    resumed = crnn()
    with pytest.raises(KeyboardInterrupt):
        loop.fit(resumed, TokenAdapter(), train, dev, params, seed=3, class_weights=np.ones(2),
                 checkpoint_dir=tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / "last.pt").exists()
    monkeypatch.setattr(loop._Trainer, "_optimizer_step", original)
    resumed = crnn()  # a fresh process: nothing in memory but the checkpoint
    history = loop.fit(resumed, TokenAdapter(), train, dev, params, seed=3, class_weights=np.ones(2),
                       checkpoint_dir=tmp_path / "ckpt")
    assert history[-1]["step"] == 12  # 60 items / 8 = 8 batches = 4 steps (accumulation 2) x 3 epochs
    for key, value in state(straight).items():
        assert torch.equal(value, resumed.state_dict()[key]), key
    assert not (tmp_path / "ckpt").exists()  # cleared once the fit completed


def test_a_finished_fit_is_loaded_by_a_fit_of_the_same_inputs_under_another_name(tmp_path, monkeypatch):
    train = items(40)
    dev = loop.DevSet(items(12, seed=1), np.array([it.labels[0] for it in items(12, seed=1)]))
    params, store = optim(eval_every=2, patience=10), tmp_path / "finished"
    trained = crnn()
    history = loop.fit(trained, TokenAdapter(), train, dev, params, seed=3, class_weights=np.ones(2),
                       live_dir=tmp_path / "first" / "dvclive", finished_dir=store)
    assert len(list(store.glob("*.pt"))) == 1

    def no_training(self):
        raise AssertionError("a finished fit was trained again")

    monkeypatch.setattr(loop._Trainer, "run", no_training)
    reused = crnn()  # the same initial weights, data, params and seed: what "another model" would fit
    assert loop.fit(reused, TokenAdapter(), train, dev, params, seed=3, class_weights=np.ones(2),
                    live_dir=tmp_path / "second" / "dvclive", finished_dir=store) == history
    for key, value in state(trained).items():
        assert torch.equal(value, reused.state_dict()[key]), key
    first, second = (sorted(p.relative_to(tmp_path / run).as_posix() for p in (tmp_path / run).rglob("*")
                            if p.is_file()) for run in ("first", "second"))
    assert second == first and first  # the DVCLive log comes with it


@pytest.mark.parametrize("change", ["class_weights", "dev", "initial_weights", "dropout", "seed", "threads"])
def test_a_fit_of_other_inputs_is_not_taken_from_the_store(tmp_path, change, monkeypatch):
    train = items(24)
    dev_items = items(8, seed=1)
    dev = loop.DevSet(dev_items, np.array([it.labels[0] for it in dev_items]))
    args = {"module": crnn(), "adapter": TokenAdapter(), "items": train, "dev": dev, "optim": optim(),
            "seed": 3, "class_weights": np.ones(2), "device": torch.device("cpu")}
    before = loop.finished_key(**args)
    if change == "class_weights":  # sentence and sentence_noweight differ only here
        args["class_weights"] = np.array([0.7, 1.8])
    elif change == "dev":
        args["dev"] = loop.DevSet(dev_items, 1 - dev.labels)
    elif change == "initial_weights":
        torch.manual_seed(1)
        args["module"] = CRNN(VOCAB, 0, CrnnParams(embedding_dim=8, filters=4, kernel_sizes=[3], hidden=8,
                                                   dropout=0.3))
    elif change == "dropout":  # no weights, no random draw at init: the same initial weights
        torch.manual_seed(0)
        args["module"] = CRNN(VOCAB, 0, CrnnParams(embedding_dim=8, filters=4, kernel_sizes=[3], hidden=8,
                                                   dropout=0.5))
    elif change == "seed":
        args["seed"] = 4
    else:
        monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert loop.finished_key(**args) != before


def test_the_store_keeps_the_most_recently_used_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(loop, "FINISHED_FITS_KEPT", 2)
    store, module = loop.FinishedFits(tmp_path), crnn()
    for n, key in enumerate("abc"):
        store.add(key, module, [{"step": n}], None)
        os.utime(store.path(key), (n, n))  # a, b, c in this order
    assert sorted(p.stem for p in tmp_path.glob("*.pt")) == ["b", "c"]
    assert store.restore("b", crnn(), None) == [{"step": 1}]  # used: now the newest
    store.add("d", module, [{"step": 3}], None)
    assert sorted(p.stem for p in tmp_path.glob("*.pt")) == ["b", "d"]
    store.path("b").write_bytes(b"torn")
    assert store.restore("b", crnn(), None) is None  # unreadable: the fit runs


class ScriptedDev:
    """A dev set whose F1 follows a script, to drive early stopping."""

    def __init__(self, scores):
        self.scores, self.calls = list(scores), 0

    def evaluate(self, module, adapter, batch_size, device, precision):
        self.calls += 1
        return {"f1": self.scores[self.calls - 1], "pr_auc": 1.0 - self.scores[self.calls - 1]}


def test_early_stopping_keeps_the_best_dev_weights():
    train = items(32)
    best_after_two = crnn()
    loop.fit(best_after_two, TokenAdapter(), train, None, optim(eval_every=2, max_steps=2), seed=5,
             class_weights=np.ones(2))
    module, dev = crnn(), ScriptedDev([0.3, 0.6, 0.5, 0.4, 0.9])
    history = loop.fit(module, TokenAdapter(), train, dev, optim(eval_every=1, patience=2), seed=5,
                       class_weights=np.ones(2))
    assert [h["dev_f1"] for h in history] == [0.3, 0.6, 0.5, 0.4]  # two evals without gain: stop
    for key, value in state(best_after_two).items():
        assert torch.equal(value, module.state_dict()[key]), key


def test_early_stopping_can_select_on_dev_pr_auc():
    module, dev = crnn(), ScriptedDev([0.7, 0.3, 0.6, 0.5, 0.1])  # PR AUC: 0.3, 0.7, 0.4, 0.5, 0.9
    history = loop.fit(module, TokenAdapter(), items(32), dev,
                       optim(eval_every=1, patience=2, select_on="pr_auc"), seed=5, class_weights=np.ones(2))
    assert [h["dev_pr_auc"] for h in history] == [0.3, 0.7, 0.4, 0.5]  # F1 fell after step 1: ignored
    assert [h["dev_f1"] for h in history] == [0.7, 0.3, 0.6, 0.5]


def test_an_unknown_selection_score_is_a_params_error():
    with pytest.raises(ValueError, match="select_on"):
        optim(select_on="accuracy")


def test_training_learns_a_learnable_label():
    train, dev_items = items(200), items(100, seed=2)
    dev = loop.DevSet(dev_items, np.array([it.labels[0] for it in dev_items]))
    module = crnn()
    weights = data.balanced_class_weights(np.array([it.labels[0] for it in train]))
    params = optim(batch_size=16, epochs=6, lr=0.05, patience=6)
    history = loop.fit(module, TokenAdapter(), train, dev, params, seed=1, class_weights=weights)
    assert max(h["dev_f1"] for h in history) > 0.8


def test_a_checkpoint_of_other_data_is_not_resumed(tmp_path, monkeypatch, caplog):
    params = optim(checkpoint_every=1, patience=10, epochs=1)
    original = loop._Trainer._optimizer_step

    def crash_at_step_3(self):
        if self.state.step == 2:
            raise KeyboardInterrupt("simulated kill")
        original(self)

    monkeypatch.setattr(loop._Trainer, "_optimizer_step", crash_at_step_3)
    with pytest.raises(KeyboardInterrupt):
        loop.fit(crnn(), TokenAdapter(), items(40), None, params, seed=3, class_weights=np.ones(2),
                 checkpoint_dir=tmp_path / "ckpt")
    monkeypatch.setattr(loop._Trainer, "_optimizer_step", original)
    other_data = items(40, seed=9)
    resumed, fresh = crnn(), crnn()
    loop.fit(resumed, TokenAdapter(), other_data, None, params, seed=3, class_weights=np.ones(2),
             checkpoint_dir=tmp_path / "ckpt")
    assert "different model/params/data" in caplog.text
    loop.fit(fresh, TokenAdapter(), other_data, None, params, seed=3, class_weights=np.ones(2))
    for key, value in state(fresh).items():  # trained from scratch on the new data, not resumed
        assert torch.equal(value, resumed.state_dict()[key]), key


def test_a_checkpoint_is_resumed_only_by_the_code_of_its_loop_and_network(edit_code):
    def checkpoint_fingerprint() -> str:
        return loop._fingerprint(crnn(), TokenAdapter(), optim(), 3, items(4))

    first = checkpoint_fingerprint()
    assert checkpoint_fingerprint() == first
    edit_code("models/tfidf.py")  # code the fit never runs
    assert checkpoint_fingerprint() == first
    edit_code("models/crnn.py")  # the network's module: not imported by the loop itself
    after_network = checkpoint_fingerprint()
    assert after_network != first
    edit_code("models/evaluation.py")  # the loop's own imports
    assert checkpoint_fingerprint() != after_network


def test_precision_is_fp32_on_a_cpu_and_mixed_on_cuda():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert loop.precision_for(cpu, "bf16") == loop.Precision()  # a CPU always trains in fp32
    assert loop.precision_for(cuda, "auto", bf16_supported=True) == loop.Precision(torch.bfloat16)
    assert loop.precision_for(cuda, "auto", bf16_supported=False) == loop.Precision(torch.float16, True)
    assert loop.precision_for(cuda, "fp16", bf16_supported=True) == loop.Precision(torch.float16, True)
    assert loop.precision_for(cuda, "fp32", bf16_supported=True) == loop.Precision()
    with pytest.raises(ValueError, match="does not support bfloat16"):
        loop.precision_for(cuda, "bf16", bf16_supported=False)
    with pytest.raises(ValueError, match="precision"):
        OptimParams(precision="half")


def test_prefetched_items_keep_their_order_and_a_producer_error_reaches_the_consumer():
    assert list(loop._prefetched(iter(range(20)), depth=2)) == list(range(20))

    def failing():
        yield 1
        raise RuntimeError("collate failed")

    with pytest.raises(RuntimeError, match="collate failed"):
        list(loop._prefetched(failing(), depth=2))


def test_a_consumer_that_stops_early_ends_the_prefetch_thread():
    produced = []

    def endless():
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    stream = loop._prefetched(endless(), depth=2)
    assert [next(stream) for _ in range(3)] == [0, 1, 2]
    stream.close()  # stops and joins the producer
    assert not any(t.name == "batch-prefetch" for t in threading.enumerate())
    assert len(produced) <= 3 + 2 + 1  # at most the queue's depth and one item in hand beyond
