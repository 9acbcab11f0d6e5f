"""The ``report`` stage (``stage``): every trained model's metrics into ``metrics/models.json`` and
the paper's Table 4."""
