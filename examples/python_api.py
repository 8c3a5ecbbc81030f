"""disputelab from Python in ten lines: a run, an experiment, their metrics and tables.
Run it from anywhere: python examples/python_api.py (offline, a few seconds)."""

import disputelab as dl

run = dl.run("tenancy", mediator="rule")  # an episode and its unmediated twin, stored
print(run.metrics())  # a pandas frame: one row per metric, one column per arm
spec = {"name": "two-cases", "scenarios": ["tenancy", "workplace"], "replicates": 2}
exp = dl.experiment(spec, resume=True)  # resume=True: a second call reads the first
print(exp.tables())  # the protocol's tables, in markdown
print(exp.scores().groupby("mediator")["final_consensus"].mean())
