"""Settlement negotiation agents: counsel (rule, planning, model, red team), clerk,
outcome analyst, auditor, legal aid and mediator."""
