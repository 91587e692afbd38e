"""Game days and GPU health (SPEC G1-G4, Q4).

Drills break something real under the training job of `gpudecide.portability` (node loss,
a full disk, revoked storage, a late GPU, a corrupt checkpoint) and check that the failure
was noticed, no committed data was lost and the final status explains itself; `cordon` turns
GPU telemetry (nvidia-smi, DCGM, kernel Xid lines) into exclusion decisions; `restarts` finds
the runs in the team's own logs that restarted from zero after losing their node.
"""
