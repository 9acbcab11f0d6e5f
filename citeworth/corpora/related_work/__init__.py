"""Kobayashi et al.'s related-work dataset: related-work sections, their citation anchors and the cited papers."""
