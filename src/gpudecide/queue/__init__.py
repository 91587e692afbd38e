"""Queue: job lifecycle phases, SLOs, preemption, chains, and pool replay (SPEC Q1-Q5)."""
