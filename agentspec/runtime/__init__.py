"""What generated packages import at run time: small helpers over ADK's public API.

Nothing here imports the compiler stages; a generated package needs only google.adk,
agentspec.runtime and the user's own modules.
"""
