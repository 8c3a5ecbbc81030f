"""Agents of two-party price negotiation with norm violations: buyer and seller
(bargainers), the moderator that ends a session and reads the deal, the remediator that
rewrites a violating utterance before the listener hears it, and the violation detector."""
