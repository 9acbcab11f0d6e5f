"""Studies built on the dataset and the models: domains (Table 5), transfer (Table 6) and data scaling."""
