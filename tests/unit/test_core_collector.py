"""The garbage-collector settings for streaming stages are scoped: undone when the block ends."""

from __future__ import annotations

import gc

import pytest

from citeworth.core import collector


def test_streaming_freezes_and_raises_the_young_threshold_then_restores_both():
    before = gc.get_threshold()
    with collector.streaming():
        assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_streaming_restores_the_settings_when_the_block_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.streaming():
        raise RuntimeError("a shard failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_made_inside_are_still_collected():
    with collector.streaming():
        cycle: list = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
