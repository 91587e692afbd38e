"""Queue: job lifecycle phases, SLOs, preemption, chains, and pool replay (SPEC Q1-Q5).

analysis   the queue and replay figures and their evidence records (library entry)
runs       settings from flags and gpudecide.yaml, the runs the commands and demo make
logs       which logs each record reads: grouped by the option they come from (Q1, Q3)
rules      the decision rules of queue and replay records (D3, D5)
figures    the typed figures of both records, for readers in any package
cli        `gpudecide queue` and `gpudecide replay`
report     their report sections
"""

__all__: list[str] = []
