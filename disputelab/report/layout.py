"""An experiment's tables in its protocol's layout (`DisputeProtocol.experiment_tables`),
followed by the ablation table where the experiment has ablated grids, and the worlds
table where it was played on a `worlds:` axis."""

from __future__ import annotations

from typing import Any

from disputelab.protocols.base import DEFAULT_PROTOCOL, get_protocol
from disputelab.report.ablation import ablation_markdown
from disputelab.report.worlds import worlds_markdown
from disputelab.store.sqlite import Store


def protocol_tables(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The markdown tables the run's protocol renders; UnknownPluginError when the
    protocol that made the run is not registered here."""
    protocol = get_protocol(config.get("protocol", DEFAULT_PROTOCOL))
    text = protocol.experiment_tables(store, run_id, config)
    extra = [x for x in (ablation_markdown(store, run_id, config),) if x]
    extra += [x for x in (worlds_markdown(store, run_id, config),) if x]
    return "\n".join([text, *extra])
