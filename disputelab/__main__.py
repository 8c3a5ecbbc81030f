"""`python -m disputelab`: the command line of the `disputelab` script, for environments
where the script is not on PATH."""

from disputelab.cli import main

if __name__ == "__main__":
    main()
