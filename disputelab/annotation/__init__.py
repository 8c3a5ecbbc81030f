"""Human annotation of stored runs: agreement statistics and the label store."""
