"""Other datasets made from the pipeline's Papers: ``export`` (unarXive JSONL, GrabCite files)."""
