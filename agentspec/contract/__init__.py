"""What the compiler and the runtime must agree on, importing neither: the placeholder and
escape syntax of instructions (as ADK fills them), the name of the default state
backend, how a store URL is shown (redacted), and the distribution's name in install hints.
The compiler's stages and the runtime both import from here; nothing here imports the rest
of agentspec."""
