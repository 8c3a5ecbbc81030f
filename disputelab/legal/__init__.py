"""Legal knowledge shared by agents and evaluators: citation normalisation, statute
retrieval and the expertise condition's retrieval step."""
