"""The data-quality gate: Great Expectations suites over the dataset, its splits and the raw input.

``gate.validate`` is the ``validate`` stage; ``tables`` flattens the data, ``suites`` declares the
expectations, ``markers`` holds the residual-citation-marker regexes, ``results`` reads GX results.
"""

import logging

# GX logs every API registration at INFO on import; keep the stage's INFO log readable.
logging.getLogger("great_expectations").setLevel(logging.WARNING)
