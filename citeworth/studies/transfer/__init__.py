"""The transfer study (Table 6): cite-worthiness as a pre-training signal for scientific NLP tasks.

``pretrain`` (the LM / Cite / LMCite variants), ``tasks`` (the downstream benchmark and its readers),
``downstream`` (fine-tuning and scoring), ``tables`` (Table 6), ``stage`` (the ``transfer`` stage).
"""
