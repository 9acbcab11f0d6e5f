"""Studies built on the dataset and the models: domains (Table 5) and transfer (Table 6)."""
