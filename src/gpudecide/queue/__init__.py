"""Queue: job lifecycle phases, SLOs, preemption, chains, and pool replay (SPEC Q1-Q5).

analysis   the queue and replay figures and their evidence records (library entry)
runs       settings from flags and gpudecide.yaml, the runs the commands and demo make
figures    the typed figures of both records, for readers in any package
cli        `gpudecide queue` and `gpudecide replay`
report     their report sections
"""

__all__: list[str] = []
