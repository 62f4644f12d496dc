"""Training models: workloads, the model zoo, the GPU catalog, DDP buckets and iterations."""
