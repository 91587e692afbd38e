"""Governance checks: ownership (RACI), isolation, data residency, standard path, secrets.

SPEC R1-R5 (responsibility), I1-I7 (isolation and residency), A8 (who sets retention and sees
the keys) and H2 (what crosses a hybrid's boundary). Each check reads an input the team fills
in once (raci.yaml, isolation.yaml, the residency requirement in gpudecide.yaml), writes one
evidence record whose findings name the option they concern and whether they stop it there,
and `rules.py` turns those findings into the decision's suggestions and stop factors.
"""
