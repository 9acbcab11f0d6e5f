"""The data-scaling study: test F1 and ROC AUC against the number of training sentences."""
