"""What every experiment table is made of, whatever the protocol: stored scores gathered
into grids by cell, estimates with CIs clustered by scenario, significance markers and
undefined-share footnotes, and the generic layout of a protocol without tables of its own."""
