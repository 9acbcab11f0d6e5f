"""Other datasets made from the readers' Papers: related_work/ (Kobayashi et al.'s format)."""
