"""Running agents offline and checking what they did: scripted models (`scripted`),
scenario files (`scenarios`) and conversation turns (`conversation`). Generated packages
never import these; `agentspec test`, `agentspec run --script` and the test suite do."""
