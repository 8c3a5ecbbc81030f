"""The staged protocol's scorers: AgentMediation's outcome and solution scores, its judged
consensus and litigation risk, and the points of contention's ROUGE-L and BERTScore."""
