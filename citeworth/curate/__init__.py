"""Curation: the CiteWorth rules (§3 of the paper) that turn papers into a cite-worthiness dataset."""
