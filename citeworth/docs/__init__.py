"""The documentation site's generated pages: the reference from the code (``reference``) and the
study's results page from its benchmark file (``study_results``)."""
