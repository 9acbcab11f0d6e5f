"""The domain study (Table 5, Figure 1): train on one field of study, test on another.

``splits`` (fields and cells), ``cells`` (running them, cached), ``clusters`` (embedding analysis),
``tables`` and ``plots`` (outputs), ``stage`` (the ``domains`` stage).
"""
