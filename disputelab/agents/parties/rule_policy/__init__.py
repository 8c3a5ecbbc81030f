"""The rule party's policy in components, each with its own state and one concern:
`Concession` (how far it has conceded), `Resentment` (how it feels about the others),
`TableReading` (what the others have said), `PackageChoice` (which package to back),
`Stances` and `OpenStances` (what it would accept, and what it says of it), `Caucus`
(what it tells the mediator alone) and `ToneOfVoice`. `RuleParty`
(`agents/parties/rule.py`) composes them with a voice."""
