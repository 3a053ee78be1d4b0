"""LLM seats: providers behind one async interface, the response cache, the answer parser, prompt
templates and the agents that use them. No Django; configuration is passed in."""
