"""Exemplar selection for the remediator (the remediator paper's contribution): the
candidate pool, value impact, the two-stage search, and the comparison of selection
methods. It plays bilateral episodes in memory, so it sits above protocols and agents.

Decisions on the open questions of the paper (spec section 14), each a free choice:

1. Price normalisation over the two opening prices (buyer 0, seller 1), clipped; with no
   deal v_price = 0 and the deal term -1; a judge's "not involved" counts as 0
   (`evaluation.bilateral`).
2. Silver annotator: zero-shot, as the paper's section 3 and the released code have it:
   the model's zero-shot rewrite with a model; offline a template rewrite whose style is
   drawn from `SILVER_STYLE_WEIGHTS`. No human gold items.
3. |S'| = 50 drawn from the pool, |D_s| = 20, n = |S_INIT| = K; one D_s shared by every
   candidate (common random numbers); D_s spans all three topics (variants of the
   built-ins); one set serves all topics.
4. Traversal: the negative streak resets on a Δ >= 0; negative-Δ children are enqueued;
   sets are deduplicated; exemplars keep stage-1 rank order, a swapped one taking the
   replaced one's place; a global budget of 120 set valuations (`search`).
5. K = 8 (the paper); vanilla ICL is a static set per episode (drawn once from its seed).
6. Judges: any model given as `--judge-model` to `disputelab evaluate`, or to `exemplars
   select`; offline the rule buyer's hidden state. Moderator: rule (signals) offline, the
   party model with one (last five utterances).
7. Deal value: averaged over deals only (as the released code), shown beside the rate.
8. Test size: what the experiment asks (the example: 10 seeds x 3 topics x 5 methods).
9. No Atom/SFT rows: any model backs every remediator kind; SFT is not implemented.
10. RLNL (critic feedback) is not implemented.
11. No human evaluation.
12. Temperatures: bargainers 0.7, remediator 0.3, moderator, detector and judge 0.7/0.0
    as written in their calls; every call is seeded from the episode seed and turn.
"""
