from agentspec.cli import main

main()
