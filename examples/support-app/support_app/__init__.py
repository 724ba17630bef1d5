"""A small support assistant: the app evaluated by this example."""
