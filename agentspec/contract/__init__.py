"""What the compiler and the runtime must agree on, importing neither: the placeholder and
escape syntax of instructions (as ADK fills them), and the name of the default state
backend. The compiler's stages and the runtime both import from here; nothing here imports
the rest of agentspec."""
