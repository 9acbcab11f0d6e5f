"""The results page of the Airflow UI, as library code (no Airflow import): which version's files
to read (``files``), what the page shows of them (``page``), charts drawn on the server
(``charts``), a Jinja2 template and a stylesheet. The plugin in ``plugins/`` only routes to these.
"""
