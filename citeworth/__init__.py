"""citeworth: build cite-worthiness datasets from scientific papers and train models on them."""

__version__ = "0.1.0"
