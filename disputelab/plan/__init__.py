"""From what a user asked for (command-line options, a spec file or a mapping, API
arguments) to one validated, immutable plan: `RunPlan` for a run, `ExperimentPlan` for an
experiment. Everything downstream (validation, the dry run, the runner, resume, the
stored config) reads the plan, never the raw request."""
