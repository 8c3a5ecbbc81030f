"""The roundtable's own agents: proactive mediators that decide after every party turn
whether to step in (rule, and the model-driven generic and social mediators), and the
turn-taking predictors of motivated turn-taking."""

# The seat interfaces of the roundtable.
MEDIATOR = "mediator"  # proactive: considers stepping in after every party turn
TURN_PREDICTOR = "turn-predictor"  # names who is expected to speak next
