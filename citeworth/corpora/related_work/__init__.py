"""Kobayashi et al.'s related-work dataset: related-work sections, their anchors, the cited papers."""
