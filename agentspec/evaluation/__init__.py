"""`agentspec eval`: evaluation cases run on a spec's models and scored by ADK's evaluators."""
