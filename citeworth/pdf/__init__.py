"""PDFs in: a GROBID client of our own (grobid.py) and the pdf2tei stage (stage.py)."""
