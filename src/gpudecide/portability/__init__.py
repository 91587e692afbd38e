"""Portability: the export acceptance test run for real (SPEC E1-E4, A2, A4, G1).

`trainer` trains and resumes a small causal LM with atomic, hashed checkpoints; `storage`
moves folders to and from an fsspec URL (local folder, s3://); `executors` run the test's
steps in a fresh process, as Slurm jobs, or write a Kubernetes Job; `scenario` runs the
five steps (train, export, delete, restore and resume, record) and builds the evidence.
"""

# The plan's file name in a workspace, here so that the command's help can name it without
# loading the plan's models (`gpudecide.portability.plan` takes it from here).
PLAN_NAME = "export-test.yaml"
