"""What the compiler and the runtime must agree on, importing neither: the placeholder and
escape syntax of instructions (as ADK fills them), the name of the default state
backend, and how a store URL is shown (redacted). The compiler's stages and the runtime
both import from here; nothing here imports the rest of agentspec."""
