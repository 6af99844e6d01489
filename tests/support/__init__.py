"""What the tests share: building bots and daemons (`bots`), the stand-in Ollama, the browser tests' stack."""
