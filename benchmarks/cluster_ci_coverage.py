"""Coverage of the tables' 95% CI against the number of scenarios (clusters).

Simulates the percentile cluster bootstrap and the cluster-robust t interval on data
shaped like the tables' (seeded; see disputelab.tables.coverage) and prints the table
from which the tables' threshold (`disputelab.evaluation.inference.MIN_CLUSTERS`) is
chosen. Takes a minute or two: the bootstrap resamples 1000 times per data set.

    python benchmarks/cluster_ci_coverage.py [--seed N]
"""

from __future__ import annotations

import argparse

from disputelab.evaluation.inference import MIN_CLUSTERS
from disputelab.tables.coverage import coverage_markdown, coverage_table, reaches_from


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    seed = parser.parse_args().seed
    table = coverage_table(seed=seed)
    print(coverage_markdown(table))
    print(f"Threshold in use: the t interval from {MIN_CLUSTERS} clusters, n/a below.")
    if reaches_from(table, "t") != MIN_CLUSTERS:
        print(f"(this seed's simulation would choose {reaches_from(table, 't')})")


if __name__ == "__main__":
    main()
