"""LLM training parallelism: transformer models, compute, memory, pipeline schedules and the
event-driven iteration (``gpunetsim train``)."""
