"""What every stage shares: the Paper model, the dataset schema, params, atomic io, errors, threads."""
