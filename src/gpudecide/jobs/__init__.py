"""Job logs: sources, the canonical attempt table, classification and the workload profile."""
