"""The roundtable's scorers: SoCRATES's metrics on oracle consensus, motivated
turn-taking's speaking shares, and ProMediate's judged events."""
