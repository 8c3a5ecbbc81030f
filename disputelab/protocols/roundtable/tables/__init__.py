"""The roundtable's experiment tables: SoCRATES's metrics by condition and mediator, its
axis and behaviour tables, and ProMediate's Table 2."""
