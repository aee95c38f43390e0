"""`agentspec init`: project templates that pass validate, build and test as written."""
