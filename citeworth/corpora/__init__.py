"""Other datasets made from the readers' Papers: related_work/ (Kobayashi et al.'s format) and
export/ (unarXive JSONL, GrabCite files)."""
